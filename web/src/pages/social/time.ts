import { TZDate } from '@date-fns/tz';
import {
  addDays,
  addMonths,
  addWeeks,
  endOfMonth,
  endOfWeek,
  format,
  isValid,
  parse,
  startOfMonth,
  startOfWeek,
} from 'date-fns';

// The calendar is drawn in the person's own time zone (the browser's): days run from that zone's
// midnight to the next, and the service groups posts the same way (content-calendar's timezone).

export const timeZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

export type View = 'month' | 'week';
const WEEK = { weekStartsOn: 1 } as const;

/** An instant as a date in the person's zone. */
export const inZone = (iso: string | Date) => new TZDate(new Date(iso).getTime(), timeZone());

/** The anchor day of the URL (`yyyy-MM-dd`), or today in the person's zone. */
export function anchorOf(day: string | null): TZDate {
  const tz = timeZone();
  const today = TZDate.tz(tz);
  if (!day) return new TZDate(today.getFullYear(), today.getMonth(), today.getDate(), tz);
  const d = parse(day, 'yyyy-MM-dd', new Date());
  return isValid(d)
    ? new TZDate(d.getFullYear(), d.getMonth(), d.getDate(), tz)
    : new TZDate(today.getFullYear(), today.getMonth(), today.getDate(), tz);
}

/** UTC, whatever zone a date carries (TZDate's own toISOString keeps its offset). */
export const utc = (d: Date) => new Date(d.getTime()).toISOString();

export const dayKey = (d: Date) => format(d, 'yyyy-MM-dd');

/** The days a view shows (whole weeks, Monday first) and the instants bounding them. */
export function viewRange(view: View, anchor: TZDate) {
  // date-fns keeps the TZDate (it builds results with the argument's constructor).
  const first = (
    view === 'month' ? startOfWeek(startOfMonth(anchor), WEEK) : startOfWeek(anchor, WEEK)
  ) as TZDate;
  const last = view === 'month' ? endOfWeek(endOfMonth(anchor), WEEK) : endOfWeek(anchor, WEEK);
  const days: TZDate[] = [];
  for (let d: TZDate = first; d <= last; d = addDays(d, 1)) days.push(d);
  return { days, from: utc(first), to: utc(addDays(first, days.length)) };
}

export const step = (view: View, anchor: TZDate, by: number) =>
  view === 'month' ? addMonths(anchor, by) : addWeeks(anchor, by);

export const viewTitle = (view: View, anchor: TZDate) => {
  if (view === 'month') return format(anchor, 'MMMM yyyy');
  const { days } = viewRange('week', anchor);
  return `Week of ${format(days[0] as Date, 'd MMM yyyy')}`;
};

/** Time of day in the person's zone, e.g. 09:30. */
export const clock = (iso: string) => format(inZone(iso), 'HH:mm');
export const longDateTime = (iso: string | null | undefined) =>
  iso ? format(inZone(iso), "EEEE d MMMM yyyy 'at' HH:mm") : '—';

/** `<input type="datetime-local">`'s value (the person's wall clock) as an instant in UTC. */
export function localInputToIso(value: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(value);
  if (!m) return undefined;
  const [y = 0, mo = 1, d = 1, h = 0, mi = 0] = m.slice(1).map(Number);
  return utc(new TZDate(y, mo - 1, d, h, mi, timeZone()));
}

/** An instant as the value of a datetime-local input in the person's zone. */
export const isoToLocalInput = (iso: string | null | undefined) =>
  iso ? format(inZone(iso), "yyyy-MM-dd'T'HH:mm") : '';

/** The same wall-clock time as `iso` in the person's zone, on `day` (`yyyy-MM-dd`), in UTC. */
export function onDay(iso: string, day: string): string {
  const was = inZone(iso);
  const [y = 0, m = 1, d = 1] = day.split('-').map(Number);
  return utc(new TZDate(y, m - 1, d, was.getHours(), was.getMinutes(), timeZone()));
}

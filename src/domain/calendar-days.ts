import { validationError } from '../platform/errors.ts';

// Ranges asked in days (issue 31, section 4): "from 2026-11-27 to 2026-11-30" is how a person, and
// so a model, asks a calendar question. A plain date is that day in the question's time zone: as
// `from`, the day's first instant; as `to`, the day included (the next day's first instant).

const PLAIN_DATE = /^\d{4}-\d{2}-\d{2}$/;
export const isPlainDate = (v: string) => PLAIN_DATE.test(v);

/** How far `timeZone`'s wall clock is ahead of UTC at `at` (milliseconds). */
function offsetMs(at: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - at;
}

/** The first instant of `date` in `timeZone` (its midnight; twice refined across an offset change). */
export function dayStartIn(date: string, timeZone: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d);
  let at = wall - offsetMs(wall, timeZone);
  at = wall - offsetMs(at, timeZone);
  return new Date(at).toISOString();
}

const nextDay = (date: string) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/**
 * A range's bounds as instants (`to` excluded), each a date-time or a plain date (see above);
 * a range that ends before it starts is refused, not answered with nothing.
 */
export function instantRange(
  range: { from: string; to: string },
  timeZone = 'UTC',
  names: { from: string; to: string } = { from: 'from', to: 'to' },
): { from: string; to: string } {
  const from = isPlainDate(range.from) ? dayStartIn(range.from, timeZone) : range.from;
  const to = isPlainDate(range.to) ? dayStartIn(nextDay(range.to), timeZone) : range.to;
  if (Date.parse(to) <= Date.parse(from))
    throw validationError([{ path: names.to, message: `Must be after ${names.from} (${range.from})` }]);
  return { from, to };
}

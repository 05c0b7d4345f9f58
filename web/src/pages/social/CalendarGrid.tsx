import type { TZDate } from '@date-fns/tz';
import { format, isSameMonth } from 'date-fns';
import { PostChip } from './PostChip';
import type { Post } from './post';
import { anchorOf, dayKey, type View } from './time';

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/**
 * Month or week: one cell per day of the person's zone, its posts in time order. At phone width
 * the month keeps only the days with posts (a list), the week stacks its days.
 */
export function CalendarGrid({
  view,
  anchor,
  days,
  posts,
}: {
  view: View;
  anchor: TZDate;
  days: TZDate[];
  posts: Map<string, Post[]>;
}) {
  const today = dayKey(anchorOf(null));
  return (
    <div className={`calendar ${view}`}>
      <div className="weekdays" aria-hidden="true">
        {WEEKDAYS.map((d) => (
          <span key={d}>{d}</span>
        ))}
      </div>
      {posts.size === 0 && <p className="empty">Nothing is scheduled or published in this {view}.</p>}
      <ol className="days">
        {days.map((d) => {
          const key = dayKey(d);
          const list = posts.get(key) ?? [];
          const classes = [
            'day',
            view === 'month' && !isSameMonth(d, anchor) ? 'outside' : '',
            list.length ? 'busy' : 'idle',
            key === today ? 'today' : '',
          ];
          return (
            <li key={key} className={classes.filter(Boolean).join(' ')}>
              <h3 className="day-label">
                <span className="day-number" aria-hidden="true">
                  {format(d, 'd')}
                </span>
                <span className="day-long">{format(d, 'EEEE d MMMM')}</span>
              </h3>
              {list.length > 0 && (
                <ul className="plain day-posts">
                  {list.map((p) => (
                    <li key={p.id}>
                      <PostChip post={p} />
                    </li>
                  ))}
                </ul>
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

import type { TZDate } from '@date-fns/tz';
import { format, isSameMonth } from 'date-fns';
import { type DragEvent, useState } from 'react';
import { POST_DRAG, PostChip } from './PostChip';
import type { Post } from './post';
import { firstImage } from './thumbnails';
import { anchorOf, dayKey, type View } from './time';

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/**
 * Month or week: one cell per day of the person's zone, its posts in time order. At phone width
 * the month keeps only the days with posts (a list), the week stacks its days. In the week, a
 * scheduled post can be dragged onto another day (its time of day kept) or moved with its Move
 * button (`onMove`, day and time).
 */
export function CalendarGrid({
  view,
  anchor,
  days,
  posts,
  thumbs,
  onMove,
  onDrop,
}: {
  view: View;
  anchor: TZDate;
  days: TZDate[];
  posts: Map<string, Post[]>;
  thumbs: Map<string, string>;
  onMove(post: Post): void;
  onDrop(postId: string, day: string): void;
}) {
  const today = dayKey(anchorOf(null));
  const [over, setOver] = useState<string | null>(null);
  const movable = (p: Post) => view === 'week' && p.status === 'scheduled';
  const carriesPost = (e: DragEvent) => e.dataTransfer.types.includes(POST_DRAG);
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
            key === over ? 'drop-target' : '',
          ];
          // A day takes a dragged post (the week only); the Move button is the way without a mouse.
          const drop =
            view === 'week'
              ? {
                  onDragOver: (e: DragEvent) => {
                    if (!carriesPost(e)) return;
                    e.preventDefault();
                    e.dataTransfer.dropEffect = 'move';
                    if (over !== key) setOver(key);
                  },
                  onDragLeave: () => setOver((o) => (o === key ? null : o)),
                  onDrop: (e: DragEvent) => {
                    const id = e.dataTransfer.getData(POST_DRAG);
                    setOver(null);
                    if (!id) return;
                    e.preventDefault();
                    onDrop(id, key);
                  },
                }
              : {};
          return (
            <li key={key} className={classes.filter(Boolean).join(' ')} {...drop}>
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
                      <PostChip
                        post={p}
                        thumb={thumbs.get(firstImage(p) ?? '')}
                        onMove={movable(p) ? () => onMove(p) : undefined}
                      />
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

import { useEffect, useRef, useState } from 'react';
import { excerpt } from './PostChip';
import type { Post } from './post';
import { isoToLocalInput, localInputToIso } from './time';

/**
 * The keyboard's way to move a post (and the way to change its time, which a drag keeps): its Move
 * button opens this above the calendar, focused on the day and time; Move or Enter writes it,
 * Cancel or Escape closes it, and either way focus goes back to where the person was.
 */
export function MoveForm({
  post,
  pending,
  onMove,
  onClose,
}: {
  post: Post;
  pending: boolean;
  onMove(at: string): void;
  onClose(): void;
}) {
  const [value, setValue] = useState(isoToLocalInput(post.scheduled_at));
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const back = document.activeElement as HTMLElement | null;
    input.current?.focus();
    return () => back?.focus();
  }, []);
  return (
    <form
      className="panel move-form"
      aria-label={`Move ${excerpt(post)}`}
      onSubmit={(e) => {
        e.preventDefault();
        const at = localInputToIso(value);
        if (at) onMove(at);
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') onClose();
      }}
    >
      <p>Move “{excerpt(post)}” to another day or time.</p>
      <label>
        New day and time{' '}
        <input
          ref={input}
          type="datetime-local"
          required
          value={value}
          onChange={(e) => setValue(e.target.value)}
        />
      </label>{' '}
      <button type="submit" className="primary" disabled={pending}>
        Move post
      </button>{' '}
      <button type="button" onClick={onClose}>
        Cancel
      </button>
    </form>
  );
}

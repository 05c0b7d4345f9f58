import { Link } from 'react-router';
import { calendarAt, PLATFORM_LABEL, type Post, STATUS_LABEL } from './post';
import { clock } from './time';

export const excerpt = (p: Post) => {
  const text = p.message ?? p.link ?? (p.media.length ? 'Media only' : '');
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
};

/** The drag's payload type: a post's id, so other drags (text, files) are not taken for a move. */
export const POST_DRAG = 'application/x-social-post';

/**
 * A post on the calendar: its local time, platform and status in words (colour only repeats
 * them), and its first picture. Given `onMove` (a scheduled post in the week view), it can be
 * dragged to another day, and its Move button is the keyboard's way to another day or time.
 */
export function PostChip({ post, thumb, onMove }: { post: Post; thumb?: string; onMove?: () => void }) {
  const at = calendarAt(post);
  return (
    <div className="chip-wrap">
      <Link
        to={`/app/social/${post.id}`}
        className={`chip status-${post.status} platform-${post.platform}${onMove ? ' movable' : ''}`}
        draggable={onMove ? true : undefined}
        onDragStart={
          onMove
            ? (e) => {
                e.dataTransfer.setData(POST_DRAG, post.id);
                e.dataTransfer.effectAllowed = 'move';
              }
            : undefined
        }
      >
        {/* Decorative: the link's words say what the post is; the picture only helps find it. */}
        {thumb && <img className="chip-thumb" src={thumb} alt="" loading="lazy" />}
        {at && <time dateTime={at}>{clock(at)}</time>}{' '}
        <span className="chip-tags">
          {PLATFORM_LABEL[post.platform] ?? post.platform} · {STATUS_LABEL[post.status]}
        </span>{' '}
        <span className="chip-text">{excerpt(post)}</span>
      </Link>
      {onMove && (
        <button
          type="button"
          className="link chip-move"
          data-move-post={post.id}
          onClick={onMove}
          aria-label={`Move ${excerpt(post)}`}
        >
          Move
        </button>
      )}
    </div>
  );
}

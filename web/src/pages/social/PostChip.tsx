import { Link } from 'react-router';
import { calendarAt, PLATFORM_LABEL, type Post, STATUS_LABEL } from './post';
import { clock } from './time';

const excerpt = (p: Post) => {
  const text = p.message ?? p.link ?? (p.media.length ? 'Media only' : '');
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
};

/** A post on the calendar: its local time, platform and status in words (colour only repeats them). */
export function PostChip({ post }: { post: Post }) {
  const at = calendarAt(post);
  return (
    <Link to={`/app/social/${post.id}`} className={`chip status-${post.status} platform-${post.platform}`}>
      {at && <time dateTime={at}>{clock(at)}</time>}{' '}
      <span className="chip-tags">
        {PLATFORM_LABEL[post.platform] ?? post.platform} · {STATUS_LABEL[post.status]}
      </span>{' '}
      <span className="chip-text">{excerpt(post)}</span>
    </Link>
  );
}

import { useQuery } from '@tanstack/react-query';
import { ErrorNote } from '../../ui/ErrorNote';
import { type Media, signedUrl } from './post';

/** A post's pictures and videos, shown through signed URLs (the bucket is private). */
export function PostMedia({ media }: { media: Media[] }) {
  const urls = useQuery({
    queryKey: ['social', 'media', media.map((m) => m.storage_path)],
    queryFn: () => Promise.all(media.map((m) => signedUrl(m.storage_path))),
    enabled: media.length > 0,
    staleTime: 30 * 60_000,
  });
  if (!media.length) return <p className="empty">No media.</p>;
  return (
    <>
      <ErrorNote error={urls.error} />
      <ul className="plain media-list">
        {media.map((m, i) => {
          const src = urls.data?.[i];
          const label = `Media ${m.position}${m.source_url ? ` from ${m.source_url}` : ''}`;
          return (
            <li key={m.storage_path}>
              {!src ? (
                <span className="hint">Loading preview…</span>
              ) : m.mime_type.startsWith('video/') ? (
                // biome-ignore lint/a11y/useMediaCaption: a person's own upload has no captions to offer
                <video src={src} controls preload="metadata" aria-label={label} />
              ) : (
                <img src={src} alt={label} />
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}

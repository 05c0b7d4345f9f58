import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { must } from '../../lib/api';
import { supabase } from '../../lib/supabase';
import type { Post } from './post';

/** A post's first picture (its media in order), the one the calendar shows beside its text. */
export const firstImage = (p: Post) =>
  [...p.media].sort((a, b) => a.position - b.position).find((m) => m.mime_type.startsWith('image/'))
    ?.storage_path;

/**
 * Signed links to the first picture of each post on screen, asked for in one batch
 * (createSignedUrls) per set of pictures, not one request per post. The key is outside
 * `['social']`, which live changes mark stale: a post moving or being published does not sign
 * every picture again, only a new picture changes the set. Links last an hour, kept half of it.
 */
export function useThumbnails(posts: Post[]): Map<string, string> {
  const paths = [...new Set(posts.map(firstImage).filter((p): p is string => !!p))].sort();
  const signed = useQuery({
    queryKey: ['social-thumbnails', paths],
    queryFn: async () =>
      must(await supabase.storage.from('social-media').createSignedUrls(paths, 3600)) as {
        path: string | null;
        signedUrl: string;
        error: string | null;
      }[],
    enabled: paths.length > 0,
    staleTime: 30 * 60_000,
    placeholderData: keepPreviousData,
  });
  const map = new Map<string, string>();
  for (const s of signed.data ?? []) if (s.path && !s.error && s.signedUrl) map.set(s.path, s.signedUrl);
  return map;
}

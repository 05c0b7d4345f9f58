import { invoke, must } from '../../lib/api';
import { supabase } from '../../lib/supabase';
import { dayKey, inZone } from './time';

// The social calendar's data: posts through /functions/v1/social-posts and content-calendar (the
// service's lifecycle rules), the accounts a post goes out on, and, to show one post, its row,
// media and figures read at /rest/v1 (docs/social.md) with signed URLs for the previews.

export const STATUSES = ['draft', 'scheduled', 'publishing', 'published', 'failed'] as const;
export type Status = (typeof STATUSES)[number];

export type Media = { position: number; storage_path: string; mime_type: string; source_url: string | null };

export type Post = {
  id: string;
  platform: string;
  account_id: string | null;
  status: Status;
  message: string | null;
  link: string | null;
  scheduled_at: string | null;
  published_at: string | null;
  permalink: string | null;
  error: Record<string, unknown> | null;
  created_by: string | null;
  media: Media[];
};

export type Account = {
  id: string;
  provider: string;
  name: string | null;
  external_id: string;
  status: string;
};

export const STATUS_LABEL: Record<Status, string> = {
  draft: 'Draft',
  scheduled: 'Scheduled',
  publishing: 'Publishing',
  published: 'Published',
  failed: 'Failed',
};

export const PLATFORM_LABEL: Record<string, string> = {
  facebook: 'Facebook',
  instagram: 'Instagram',
  twitter: 'Twitter',
  linkedin: 'LinkedIn',
};

/** The service lets callers change content, and delete, only in these states (docs/social.md). */
export const editable = (p: Post) => p.status === 'draft' || p.status === 'scheduled';

/** When a post sits on the calendar: its publication, else its schedule. */
export const calendarAt = (p: Post) => p.published_at ?? p.scheduled_at;

export const accountLabel = (a: Account) =>
  `${a.name ?? a.external_id} (${PLATFORM_LABEL[a.provider] ?? a.provider})`;

type Envelope<T> = { data: T[]; pagination: { total: number } };

export async function calendarPosts(from: string, to: string, timezone: string) {
  // content-calendar has the scheduled, publishing and published posts; failed ones stay on the
  // day they were meant for, so they come from the list (one window: at most a few weeks).
  const [calendar, failed] = await Promise.all([
    invoke<{ days: { day: string; posts: Post[] }[] }>('content-calendar', { query: { from, to, timezone } }),
    invoke<Envelope<Post>>('social-posts', { query: { status: 'failed', from, to, per_page: 100 } }),
  ]);
  // The service's own day for what it grouped; failed posts on their day in the same zone.
  return [
    ...calendar.days.flatMap((d) => d.posts.map((post) => ({ day: d.day, post }))),
    ...failed.data.map((post) => ({
      day: dayKey(inZone(calendarAt(post) ?? post.scheduled_at ?? '')),
      post,
    })),
  ];
}

export const drafts = (page: number, perPage: number) =>
  invoke<Envelope<Post>>('social-posts', { query: { status: 'draft', page: page + 1, per_page: perPage } });

export async function socialAccounts() {
  const all = await invoke<Envelope<Account>>('connected-accounts', { query: { per_page: 100 } });
  return all.data.filter(
    (a) => (a.provider === 'facebook' || a.provider === 'instagram') && a.status === 'connected',
  );
}

export async function readPost(id: string): Promise<Post | null> {
  const row = must(await supabase.from('social_posts').select('*').eq('id', id).maybeSingle()) as Omit<
    Post,
    'media'
  > | null;
  if (!row) return null;
  const media = must(
    await supabase
      .from('social_post_media')
      .select('position, storage_path, mime_type, source_url')
      .eq('post_id', id)
      .order('position'),
  ) as Media[];
  return { ...row, media };
}

/** Each metric's latest value (the metrics job appends a time series). */
export async function latestMetrics(id: string) {
  const rows = must(
    await supabase
      .from('social_post_metrics')
      .select('metric, value, fetched_at')
      .eq('post_id', id)
      .order('fetched_at', { ascending: false })
      .limit(200),
  ) as { metric: string; value: number | string }[];
  const latest = new Map<string, number>();
  for (const r of rows) if (!latest.has(r.metric)) latest.set(r.metric, Number(r.value));
  return [...latest].sort(([a], [b]) => a.localeCompare(b));
}

/** A link to show a stored file in an <img> or <video> (valid an hour). */
export async function signedUrl(path: string) {
  const res = await supabase.storage.from('social-media').createSignedUrl(path, 3600);
  return must(res).signedUrl;
}

export type PostWrite = {
  message?: string | null;
  link?: string | null;
  media_urls?: string[];
  scheduled_at?: string;
};

export const createPost = (body: PostWrite & { platform: string; account_id: string }) =>
  invoke<Post>('social-posts', { method: 'POST', body });
export const updatePost = (id: string, body: PostWrite & { cancel?: true }) =>
  invoke<Post>('social-posts', { method: 'PATCH', body: { id, ...body } });
export const deletePost = (id: string) => invoke<Post>('social-posts', { method: 'DELETE', body: { id } });

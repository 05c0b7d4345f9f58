import { z } from 'zod';
import type { Config } from '../config.ts';
import { claimedOrganization, type Principal, type Queryable } from '../platform/db/database.ts';
import { Params } from '../platform/db/params.ts';
import { AppError, notFound, type PgError, validationError } from '../platform/errors.ts';
import type { Queue } from '../platform/queue/queue.ts';
import type { ObjectStore } from '../platform/storage/object-store.ts';
import { requireScope } from './agent-keys.ts';
import { instantRange } from './calendar-days.ts';
import type { Deps } from './deps.ts';
import { parseInput } from './inputs.ts';
import { SOCIAL_MEDIA_BUCKET } from './media-bucket.ts';
import { discardMedia, type ImportedMedia, importMediaUrls } from './media-import.ts';
import { listPage } from './pagination.ts';
import { type SignedUrlDeps, signedMediaUrl } from './signed-url.ts';
import {
  MAX_SCHEDULE_AHEAD_DAYS,
  MEDIA_CONSTRAINTS,
  SOCIAL_MINIMUM_PLAN,
  SOCIAL_PLATFORMS,
  WRITABLE_PLATFORMS,
} from './social.ts';
import { enqueuePublish } from './social-publish.ts';

// The social calendar's posts (issue 14, docs/social.md): the rules every entry point shares —
// the MCP social tools, /functions/v1/social-posts and content-calendar. The database enforces the
// lifecycle (migrations/0022); this module checks the plan, scope and account first, downloads
// media before anything is written (a refused download leaves no post and no file), and reads
// posts with their media. Callers act under row-level security.

export type SocialDeps = Pick<Deps, 'db' | 'plans'> &
  SignedUrlDeps & {
    queue: Queue;
    storage: ObjectStore;
    config: Pick<Config, 'mediaFetch' | 'mediaImport'>;
    /** Media URLs on this address are files of the bucket, copied rather than downloaded. */
    publicUrl?: string;
  };

const NOT_WRITABLE = `Only Facebook posts (and Instagram posts, through its Meta account) can be created; ${SOCIAL_PLATFORMS.filter(
  (p) => !(WRITABLE_PLATFORMS as readonly string[]).includes(p),
).join(' and ')} are read-only`;

const scheduledAt = z.iso.datetime({ offset: true }).describe('ISO 8601 with an offset');
const MediaUrls = z.array(z.url().max(2048)).max(MEDIA_CONSTRAINTS.max_items_per_post);
// A post's link is shown as a link in the dashboard and sent to Meta: a web address only, never
// `javascript:`, `data:` or `vbscript:`, which run or carry content where a reader clicks. The
// text itself must start with the scheme (the URL parser forgives leading spaces and tabs inside
// the scheme); migrations/0032_post_link.sql holds every other write path to the same rule.
const LINK_RULE = 'A link is a web address starting with http:// or https://';
const PostLink = z
  .url({ protocol: /^https?$/, error: LINK_RULE, abort: true })
  .max(2048)
  .regex(/^https?:\/\/[^\s\p{Cc}]+$/iu, LINK_RULE);

export const NewSocialPost = z.strictObject({
  platform: z.enum(SOCIAL_PLATFORMS),
  account_id: z.guid().optional(),
  message: z.string().trim().min(1).max(MEDIA_CONSTRAINTS.max_message_chars).optional(),
  link: PostLink.optional(),
  media_urls: MediaUrls.optional(),
  scheduled_at: scheduledAt.optional(),
});
export type NewSocialPostInput = z.input<typeof NewSocialPost>;

export const SocialPostChanges = z.strictObject({
  id: z.guid(),
  message: z.string().trim().min(1).max(MEDIA_CONSTRAINTS.max_message_chars).nullable().optional(),
  link: PostLink.nullable().optional(),
  media_urls: MediaUrls.optional(),
  scheduled_at: scheduledAt.optional(),
  cancel: z.literal(true).optional(),
});
export type SocialPostChangesInput = z.input<typeof SocialPostChanges>;

/** Free plans have no social calendar: plan_required, naming the cheapest plan that has it. */
export async function requireSocialPlan(deps: Pick<Deps, 'plans'>, principal: Principal): Promise<void> {
  const org = claimedOrganization(principal);
  const plan = org ? await deps.plans.forOrganization(org) : null;
  if (plan?.slug !== 'free') return;
  throw new AppError(
    403,
    'plan_required',
    `The social calendar needs the ${SOCIAL_MINIMUM_PLAN} plan or higher; this organization is on ${plan.name}. A person can upgrade the plan.`,
    { plan: plan.slug },
    { minimum_plan: SOCIAL_MINIMUM_PLAN },
  );
}

const notConfigured = (reason: 'no_connected_account' | 'module_unavailable') =>
  new AppError(
    409,
    'social_not_configured',
    reason === 'no_connected_account'
      ? 'No Facebook Page or Instagram account is connected yet: an owner or admin connects one in Settings, Connected accounts'
      : 'The social calendar is not available on this service: an operator runs the migrations (svc migrate)',
    // The way to connect, for programs: people read the message (the dashboard's words).
    reason === 'no_connected_account' ? { reason, connect: '/functions/v1/connected-accounts' } : { reason },
  );

type Account = {
  id: string;
  provider: 'facebook' | 'instagram';
  external_id: string;
  name: string | null;
  /** connected, or needs_reconnect with the provider's reason (src/domain/connection-health.ts). */
  status: string;
  reason?: string;
};

async function socialAccounts(tx: Queryable): Promise<Account[]> {
  return tx.query<Account>(
    `select a.id, a.provider, a.external_id, a.name, a.status,
            a.needs_reconnect_reason as reason from public.connected_accounts a
      where a.organization_id = app.current_org_id() and a.provider in ('facebook', 'instagram')
        and a.disconnected_at is null order by a.created_at, a.id`,
  );
}

/**
 * Runs a social operation as the caller: the plan first, then (for writes) the scope, then a
 * connected account must exist. A missing social table is the configuration error, not a 500.
 */
async function asSocial<T>(
  deps: SocialDeps,
  principal: Principal,
  access: 'read' | 'write',
  fn: (tx: Queryable, accounts: Account[]) => Promise<T>,
): Promise<T> {
  await requireSocialPlan(deps, principal);
  if (access === 'write') await requireScope(deps, principal, 'write', 'Changing social posts');
  try {
    return await deps.db.asPrincipal(
      principal,
      async (tx) => {
        const accounts = await socialAccounts(tx);
        if (!accounts.length) throw notConfigured('no_connected_account');
        if (access === 'write') await tx.query(`select set_config('svc.social_write', 'on', true)`);
        return fn(tx, accounts);
      },
      { readOnly: access === 'read' },
    );
  } catch (err) {
    if ((err as PgError).code === '42P01') throw notConfigured('module_unavailable');
    throw err;
  }
}

/** The account a new post goes out on: the one named, else the only one of its platform. */
function accountFor(accounts: Account[], platform: string, accountId: string | undefined): Account {
  if (!(WRITABLE_PLATFORMS as readonly string[]).includes(platform))
    throw validationError([{ path: 'platform', message: NOT_WRITABLE }], NOT_WRITABLE);
  const fits = accounts.filter((a) => a.provider === platform);
  const account = accountId ? fits.find((a) => a.id === accountId) : fits.length === 1 ? fits[0] : undefined;
  if (account) return account;
  const message = accountId
    ? `No connected ${platform} account ${accountId} in this organization`
    : fits.length
      ? `Several ${platform} accounts are connected: give account_id (svc_list_social_accounts)`
      : `No ${platform} account is connected`;
  throw validationError([{ path: 'account_id', message }], message);
}

const POST_ROW = `to_jsonb(p) - 'calendar_at' || jsonb_build_object(
  'platform', case when p.meta_payload ->> 'platform' = 'instagram' then 'instagram' else p.platform end,
  'media', coalesce((select jsonb_agg(jsonb_build_object('position', m.position, 'storage_path', m.storage_path,
      'mime_type', m.mime_type, 'bytes', m.bytes, 'width', m.width, 'height', m.height, 'source_url', m.source_url)
      order by m.position)
    from public.social_post_media m where m.organization_id = p.organization_id and m.post_id = p.id), '[]'))`;

export type SocialPostRecord = Record<string, unknown> & { id: string; status: string };

async function readPost(tx: Queryable, id: string): Promise<SocialPostRecord> {
  const [row] = await tx.query<{ r: SocialPostRecord }>(
    `select ${POST_ROW} as r from public.social_posts p where p.organization_id = app.current_org_id() and p.id = $1`,
    [id],
  );
  if (!row) throw notFound('social post');
  return row.r;
}

async function insertMedia(tx: Queryable, postId: string, media: ImportedMedia[]) {
  for (const m of media)
    await tx.query(
      `insert into public.social_post_media (post_id, position, storage_path, mime_type, bytes, width, height, source_url)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [postId, m.position + 1, m.path, m.mimeType, m.size, m.width ?? null, m.height ?? null, m.sourceUrl],
    );
}

/**
 * Downloads `urls` into the organization's folder of the bucket (src/domain/media-import.ts: one
 * refused URL refuses them all), runs `write` with them, and removes the files again when the
 * write fails: a refused post leaves nothing behind.
 */
async function withMedia<T>(
  deps: SocialDeps,
  principal: Principal,
  urls: string[] | undefined,
  write: (media: ImportedMedia[] | undefined) => Promise<T>,
): Promise<T> {
  const org = claimedOrganization(principal) as string;
  const media = urls
    ? await importMediaUrls(
        {
          storage: deps.storage,
          options: deps.config.mediaFetch,
          concurrency: deps.config.mediaImport.concurrency,
          publicUrl: deps.publicUrl,
        },
        org,
        urls,
      )
    : undefined;
  try {
    return await write(media);
  } catch (err) {
    if (media) await discardMedia(deps.storage, media);
    throw err;
  }
}

/** The bucket keys of a post's media as read (readPost). */
const mediaKeys = (post: SocialPostRecord) =>
  (post.media as { storage_path: string }[]).map((m) => ({
    key: `${SOCIAL_MEDIA_BUCKET}/${m.storage_path}`,
  }));

/** A scheduled post's publication, queued in the transaction that scheduled it (src/domain/social-publish.ts). */
async function schedulePublish(deps: Pick<SocialDeps, 'queue'>, tx: Queryable, post: SocialPostRecord) {
  if (post.status !== 'scheduled') return;
  await enqueuePublish(tx, deps.queue, {
    organization_id: post.organization_id as string,
    post_id: post.id,
    scheduled_at: post.scheduled_at as string,
  });
}

export async function createSocialPost(deps: SocialDeps, principal: Principal, raw: NewSocialPostInput) {
  const input = parseInput(NewSocialPost, raw);
  if (!input.message && !input.link && !input.media_urls?.length)
    throw validationError([{ path: 'message', message: 'A post needs a message, a link or media' }]);
  // The account is checked before any download: a post that cannot be made fetches nothing.
  await asSocial(deps, principal, 'read', async (_tx, accounts) =>
    accountFor(accounts, input.platform, input.account_id),
  );
  return withMedia(deps, principal, input.media_urls, (media) =>
    asSocial(deps, principal, 'write', async (tx, accounts) => {
      const account = accountFor(accounts, input.platform, input.account_id);
      const [row] = await tx.query<{ id: string }>(
        `insert into public.social_posts (platform, account_id, status, message, link, scheduled_at, created_by)
         values ($1, $2, $3, $4, $5, $6, app.actor()) returning id`,
        [
          input.platform,
          account.id,
          input.scheduled_at ? 'scheduled' : 'draft',
          input.message ?? null,
          input.link ?? null,
          input.scheduled_at ?? null,
        ],
      );
      const id = (row as { id: string }).id;
      await insertMedia(tx, id, media ?? []);
      const post = await readPost(tx, id);
      await schedulePublish(deps, tx, post);
      return post;
    }),
  );
}

export async function updateSocialPost(deps: SocialDeps, principal: Principal, raw: SocialPostChangesInput) {
  const input = parseInput(SocialPostChanges, raw);
  if (input.cancel && input.scheduled_at)
    throw validationError([{ path: 'cancel', message: 'Cancel or reschedule, not both' }]);
  const { replaced, ...result } = await withMedia(deps, principal, input.media_urls, (media) =>
    asSocial(deps, principal, 'write', async (tx) => {
      const before = await readPost(tx, input.id);
      const p = new Params();
      const sets: string[] = [];
      if (input.message !== undefined) sets.push(`message = ${p.add(input.message)}`);
      if (input.link !== undefined) sets.push(`link = ${p.add(input.link)}`);
      if (input.cancel) sets.push(`status = 'draft'`);
      if (input.scheduled_at)
        sets.push(`status = 'scheduled'`, `scheduled_at = ${p.add(input.scheduled_at)}`);
      // Touching the row runs the lifecycle check even when only the media change.
      sets.push('updated_at = now()');
      await tx.query(
        `update public.social_posts set ${sets.join(', ')}
          where organization_id = app.current_org_id() and id = ${p.add(input.id)}`,
        p.values,
      );
      if (media) {
        await tx.query(
          'delete from public.social_post_media where organization_id = app.current_org_id() and post_id = $1',
          [input.id],
        );
        await insertMedia(tx, input.id, media);
      }
      const after = await readPost(tx, input.id);
      if (input.scheduled_at) await schedulePublish(deps, tx, after);
      if (!after.message && !after.link && !(after.media as unknown[]).length)
        throw validationError([{ path: 'message', message: 'A post needs a message, a link or media' }]);
      return { post: after, previous_status: before.status, replaced: media ? mediaKeys(before) : [] };
    }),
  );
  // The files of media replaced go once the post no longer names them.
  await discardMedia(deps.storage, replaced);
  return result;
}

export async function deleteSocialPost(deps: SocialDeps, principal: Principal, id: string) {
  const removed = await asSocial(deps, principal, 'write', async (tx) => {
    const post = await readPost(tx, id);
    const gone = await tx.query(
      'delete from public.social_posts where organization_id = app.current_org_id() and id = $1 returning id',
      [id],
    );
    if (!gone.length) throw notFound('social post');
    return post;
  });
  await discardMedia(deps.storage, mediaKeys(removed));
  return removed;
}

/** How long the media links of a post as read stay valid. */
const MEDIA_LINK_SECONDS = 3600;

/** One post with its latest metrics, each of its media with a signed URL to show or download it (valid an hour). */
export async function getSocialPost(deps: SocialDeps, principal: Principal, id: string) {
  const post = await asSocial(deps, principal, 'read', async (tx) => {
    const read = await readPost(tx, id);
    const [figures] = await tx.query<{ metrics: Record<string, number> }>(
      `select coalesce(jsonb_object_agg(l.metric, l.value), '{}') as metrics from (
         select distinct on (m.metric) m.metric, m.value::float8 as value from public.social_post_metrics m
          where m.organization_id = app.current_org_id() and m.post_id = $1
          order by m.metric, m.fetched_at desc) l`,
      [id],
    );
    return { ...read, metrics: figures?.metrics ?? {} } as SocialPostRecord;
  });
  const media = (post.media as { storage_path: string }[]).map((m) => ({
    ...m,
    signed_url: signedMediaUrl(deps, m.storage_path, MEDIA_LINK_SECONDS),
  }));
  return { ...post, media };
}

export type SocialPostFilter = {
  status?: string[] | undefined;
  platform?: string | undefined;
  account_id?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
};

function filterSql(f: SocialPostFilter, p: Params): string[] {
  const where: string[] = [];
  if (f.status?.length) where.push(`p.status = any (${p.add(f.status)}::text[])`);
  if (f.platform) where.push(`p.platform = ${p.add(f.platform)}`);
  if (f.account_id) where.push(`p.account_id = ${p.add(f.account_id)}::uuid`);
  if (f.from) where.push(`p.calendar_at >= ${p.add(f.from)}::timestamptz`);
  if (f.to) where.push(`p.calendar_at < ${p.add(f.to)}::timestamptz`);
  return where;
}

/** Newest first, by cursor (the MCP tool). */
export async function listSocialPosts(
  deps: SocialDeps,
  principal: Principal,
  f: SocialPostFilter & { limit: number; cursor?: string | undefined },
) {
  await asSocial(deps, principal, 'read', async () => {});
  const p = new Params();
  const { items, next_cursor } = await listPage<SocialPostRecord>(deps, principal, {
    from: 'public.social_posts p',
    alias: 'p',
    row: POST_ROW,
    where: filterSql(f, p),
    p,
    cursor: f.cursor,
    limit: f.limit,
  });
  return { posts: items, next_cursor };
}

/** Newest first, by page with the total (the list envelope of /functions/v1/social-posts). */
export async function pageSocialPosts(
  deps: SocialDeps,
  principal: Principal,
  f: SocialPostFilter,
  page: { limit: number; offset: number },
) {
  return asSocial(deps, principal, 'read', async (tx) => {
    const p = new Params();
    const where = ['p.organization_id = app.current_org_id()', ...filterSql(f, p)].join(' and ');
    const [count] = await tx.query<{ n: number }>(
      `select count(*)::int as n from public.social_posts p where ${where}`,
      p.values,
    );
    const rows = await tx.query<{ r: SocialPostRecord }>(
      `select ${POST_ROW} as r from public.social_posts p where ${where}
        order by p.created_at desc, p.id desc limit ${p.add(page.limit)} offset ${p.add(page.offset)}`,
      p.values,
    );
    return { posts: rows.map((r) => r.r), total: count?.n ?? 0 };
  });
}

export async function listSocialAccounts(deps: SocialDeps, principal: Principal) {
  // The reason only where there is one: agents read this every turn.
  return asSocial(deps, principal, 'read', async (_tx, accounts) =>
    accounts.map(({ reason, ...a }) => (reason ? { ...a, reason } : a)),
  );
}

/** The IANA names this runtime knows (built once: the list has some 400 entries), and UTC. */
const TIME_ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC']);

/**
 * Scheduled and published posts between two instants, grouped by the day they fall on in
 * `timezone` (an IANA name). The database does the grouping, so a day is the zone's own midnight
 * to midnight, daylight saving included.
 */
export async function contentCalendar(
  deps: SocialDeps,
  principal: Principal,
  q: { from: string; to: string; timezone: string },
) {
  if (!TIME_ZONES.has(q.timezone))
    throw validationError([{ path: 'timezone', message: 'An IANA time zone, e.g. Europe/Lisbon' }]);
  const range = instantRange(q, q.timezone);
  const days = MAX_SCHEDULE_AHEAD_DAYS + 31;
  if (Date.parse(range.to) - Date.parse(range.from) > days * 86_400_000)
    throw validationError([{ path: 'to', message: `At most ${days} days after from` }]);
  return asSocial(deps, principal, 'read', async (tx) => {
    const rows = await tx.query<{ day: string; posts: SocialPostRecord[] }>(
      `select to_char(p.calendar_at at time zone $3, 'YYYY-MM-DD') as day,
              jsonb_agg(${POST_ROW} order by p.calendar_at, p.id) as posts
         from public.social_posts p
        where p.organization_id = app.current_org_id() and p.status in ('scheduled', 'publishing', 'published')
          and p.calendar_at >= $1::timestamptz and p.calendar_at < $2::timestamptz
        group by 1 order by 1`,
      [range.from, range.to, q.timezone],
    );
    return { timezone: q.timezone, days: rows };
  });
}

const PUBLISHED_IN = `p.organization_id = app.current_org_id() and p.status = 'published'
  and p.published_at >= $1::timestamptz and p.published_at < $2::timestamptz
  and ($3::text is null or p.platform = $3::text)`;

// Each post's newest value of each metric (the metrics job keeps a time series).
const LATEST = `with latest as (
  select distinct on (m.post_id, m.metric) m.post_id, m.metric, m.value
    from public.social_post_metrics m
    join public.social_posts p on p.organization_id = m.organization_id and p.id = m.post_id
   where ${PUBLISHED_IN}
   order by m.post_id, m.metric, m.fetched_at desc)`;

/**
 * Engagement of the posts published in [from, to): per platform, the number of posts and the sum
 * of each metric's latest value; per post (newest first, at most `limit`), its latest figures.
 * Metric names are Meta's (docs/social.md, "Analytics").
 */
export async function socialAnalytics(
  deps: SocialDeps,
  principal: Principal,
  q: { from: string; to: string; platform?: string | undefined; limit: number },
) {
  const range = instantRange(q);
  return asSocial(deps, principal, 'read', async (tx) => {
    const params = [range.from, range.to, q.platform ?? null];
    const totals = await tx.query<{ platform: string; posts: number; totals: Record<string, number> }>(
      `${LATEST}
       select p.platform, count(*)::int as posts,
              coalesce((select jsonb_object_agg(t.metric, t.total) from (
                 select l.metric, sum(l.value)::float8 as total from latest l
                   join public.social_posts x on x.organization_id = app.current_org_id() and x.id = l.post_id
                  where x.platform = p.platform group by l.metric) t), '{}') as totals
         from public.social_posts p where ${PUBLISHED_IN} group by p.platform order by p.platform`,
      params,
    );
    const posts = await tx.query<Record<string, unknown>>(
      `${LATEST}
       select p.id, p.platform, p.published_at, p.permalink, left(p.message, 200) as message,
              coalesce((select jsonb_object_agg(l.metric, l.value::float8) from latest l where l.post_id = p.id), '{}') as metrics
         from public.social_posts p where ${PUBLISHED_IN}
        order by p.published_at desc, p.id desc limit $4`,
      [...params, q.limit],
    );
    return { from: range.from, to: range.to, platforms: totals, posts };
  });
}

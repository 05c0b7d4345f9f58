import type { GraphFailure } from '../channels/graph-errors.ts';
import { createGraphPublisher, type GraphPublisher } from '../channels/graph-publish.ts';
import { type MediaItem, type PublishProgress, publishPost } from '../channels/graph-publish-flow.ts';
import type { Config } from '../config.ts';
import { accountById } from '../domain/connected-accounts.ts';
import { reconnectReason } from '../domain/connection-health.ts';
import {
  giveUpPublishing,
  PUBLISH_JOB,
  type PublishJob,
  UNPUBLISHED_POSTS,
} from '../domain/social-publish.ts';
import type { Database, Queryable } from '../platform/db/database.ts';
import type { JobDefinition, JobPolicy, Queue } from '../platform/queue/queue.ts';
import type { Secrets } from '../platform/secrets.ts';
import type { JobDeps, MediaUrl } from './deps.ts';
import { METRICS_JOB } from './pull-social-metrics.ts';

// The publisher: one run of a scheduled post's job (enqueued by src/domain/social-publish.ts at
// scheduled_at). It re-reads the post and acts only if it is still scheduled for the time the job
// was made for and is due; it claims it (scheduled → publishing, and a claim with a deadline, in
// one transaction) so one run at a time calls Meta; it publishes the post as it is now through
// graph-publish-flow.ts, which saves what Meta made before each next step; and it records
// published (Meta's id, permalink) or failed (Meta's error). Transient failures keep the post
// `publishing` and the job retries, looking first at what an earlier run left. docs/social.md.

export type PublishDeps = {
  db: Database;
  secrets: Secrets;
  queue: Queue;
  graph: GraphPublisher;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  /** A URL Meta can fetch a stored file from; absent, posts with media fail with media_unavailable. */
  mediaUrl?: MediaUrl;
  /** How long a claim holds: longer than a run takes, so only a dead run's claim runs out. */
  claimSeconds: number;
  containerPolls: number;
  containerPollMs: number;
  metricsIntervalSeconds: number;
};

type Post = {
  organization_id: string;
  id: string;
  status: string;
  account_id: string | null;
  message: string | null;
  link: string | null;
  this_schedule: boolean;
  due: boolean;
  ours: boolean;
  held: boolean;
  progress: PublishProgress;
  media: { storage_path: string; mime_type: string }[];
};

/** claimed: this run publishes. busy/early: look again later. done: nothing to do (moved, cancelled, settled, gone). */
type Claim = { state: 'claimed'; post: Post } | { state: 'busy' | 'early' | 'done' };

const READ = `select p.organization_id, p.id, p.status, p.account_id, p.message, p.link,
    p.scheduled_at is not null and abs(extract(epoch from p.scheduled_at - $3::timestamptz)) < 0.001 as this_schedule,
    p.scheduled_at <= now() as due,
    coalesce(abs(extract(epoch from s.scheduled_at - $3::timestamptz)) < 0.001, false) as ours,
    coalesce(s.claimed_until > now(), false) as held,
    coalesce(s.progress, '{}') as progress,
    coalesce((select jsonb_agg(jsonb_build_object('storage_path', m.storage_path, 'mime_type', m.mime_type)
                               order by m.position)
                from public.social_post_media m
               where m.organization_id = p.organization_id and m.post_id = p.id), '[]') as media
   from public.social_posts p
   left join app.social_publications s on s.organization_id = p.organization_id and s.post_id = p.id
  where p.organization_id = $1 and p.id = $2
  for update of p`;

/** A scheduled post's claim: the post publishing and the claim's deadline, in one statement. */
const CLAIM = `with post as (
    update public.social_posts set status = 'publishing', error = null where organization_id = $1 and id = $2)
  insert into app.social_publications (organization_id, post_id, scheduled_at, claimed_until, runs)
  values ($1, $2, $3, now() + make_interval(secs => $4), 1)
  on conflict (organization_id, post_id) do update
    set scheduled_at = excluded.scheduled_at, claimed_until = excluded.claimed_until, progress = '{}', runs = 1`;

async function claim(deps: PublishDeps, job: PublishJob): Promise<Claim> {
  return deps.db.transaction(async (tx) => {
    const [post] = await tx.query<Post>(READ, [job.organization_id, job.post_id, job.scheduled_at]);
    if (!post) return { state: 'done' };
    const key = [job.organization_id, job.post_id];
    if (post.status === 'scheduled') {
      if (!post.this_schedule) return { state: 'done' }; // moved: its new time has its own job
      if (!post.due) return { state: 'early' };
      await tx.query(CLAIM, [...key, job.scheduled_at, deps.claimSeconds]);
      return { state: 'claimed', post: { ...post, progress: {} } };
    }
    // A retry (or a second job for the same time) finds the post publishing: it takes over only a
    // claim that is free, which a run releases when it ends and a dead run's deadline ends.
    if (post.status !== 'publishing' || !post.ours) return { state: 'done' };
    if (post.held) return { state: 'busy' };
    await tx.query(
      `update app.social_publications set claimed_until = now() + make_interval(secs => $3), runs = runs + 1
        where organization_id = $1 and post_id = $2`,
      [...key, deps.claimSeconds],
    );
    return { state: 'claimed', post };
  });
}

/** sent: published or failed (recorded). retry: transient, the job runs again. skipped: nothing to do. */
export type PublishOutcome =
  | { state: 'published' | 'failed' | 'skipped' }
  | { state: 'retry'; error: GraphFailure['error'] | { type: string; message: string } };

export async function publishOnce(deps: PublishDeps, job: PublishJob): Promise<PublishOutcome> {
  const c = await claim(deps, job);
  if (c.state === 'busy')
    return { state: 'retry', error: { type: 'in_progress', message: 'another run is publishing this post' } };
  if (c.state === 'early')
    return { state: 'retry', error: { type: 'not_due', message: 'the post is not due yet' } };
  if (c.state !== 'claimed') return { state: 'skipped' };
  const post = c.post;
  const key = [job.organization_id, job.post_id];
  let result: Awaited<ReturnType<typeof publishPost>>;
  try {
    const account = post.account_id ? await accountById(deps, post.organization_id, post.account_id) : null;
    if (!account || (account.provider !== 'facebook' && account.provider !== 'instagram'))
      return fail(
        deps,
        key,
        refusal('account_disconnected', 'The Facebook Page or Instagram account was disconnected'),
      );
    // The token is known not to work: the post fails now, nothing is sent to Meta. (A disconnected
    // account is no account above: accountById reads live ones only.)
    const reconnect = reconnectReason(account);
    if (reconnect) return fail(deps, key, refusal('account_needs_reconnect', reconnect.reason));
    const media = mediaOf(deps, post);
    if (!media)
      return fail(
        deps,
        key,
        refusal('media_unavailable', 'Stored media cannot be given to Meta (no signed URLs)'),
      );
    result = await publishPost(
      {
        graph: deps.graph,
        save: (progress) =>
          deps.db
            .query(
              'update app.social_publications set progress = $3 where organization_id = $1 and post_id = $2',
              [...key, JSON.stringify(progress)],
            )
            .then(() => {}),
        sleep: deps.sleep,
        containerPolls: deps.containerPolls,
        containerPollMs: deps.containerPollMs,
        now: deps.now,
      },
      { externalId: account.external_id, accessToken: account.access_token },
      { platform: account.provider, message: post.message, link: post.link, media },
      post.progress,
    );
  } catch (err) {
    await release(deps.db, key); // the next run need not wait for the claim to run out
    throw err;
  }
  if (result.ok) {
    await deps.db.transaction(async (tx) => {
      await tx.query(
        `update public.social_posts set status = 'published', published_at = now(), provider_post_id = $3,
                permalink = $4, error = null
          where organization_id = $1 and id = $2 and status = 'publishing'`,
        [...key, result.id, result.permalink],
      );
      await release(tx, key);
      if (result.id)
        await deps.queue.enqueue(
          tx,
          METRICS_JOB,
          { organization_id: key[0], post_id: key[1] },
          // owner: this transaction has the owner's rights, so the job's insert is one statement.
          { startAfter: deps.metricsIntervalSeconds, owner: true },
        );
    });
    return { state: 'published' };
  }
  if (result.transient) {
    await deps.db.query(
      'update public.social_posts set error = $3 where organization_id = $1 and id = $2 and status = $4',
      [...key, JSON.stringify(providerError(result)), 'publishing'],
    );
    await release(deps.db, key);
    return { state: 'retry', error: result.error };
  }
  return fail(deps, key, result);
}

function mediaOf(deps: PublishDeps, post: Post): MediaItem[] | null {
  if (post.media.length === 0) return [];
  if (!deps.mediaUrl) return null;
  // A day: Meta fetches at once, but a video container may be fetched again while it processes.
  return post.media.map((m) => ({
    kind: m.mime_type.startsWith('video/') ? 'video' : 'image',
    url: (deps.mediaUrl as MediaUrl)(m.storage_path, 86_400),
  }));
}

const release = (q: Queryable, key: string[]) =>
  q.query(
    'update app.social_publications set claimed_until = null where organization_id = $1 and post_id = $2',
    key,
  );

/** What `error` holds: Meta's code and words (or ours when Meta never answered). */
const providerError = (f: GraphFailure) => ({ ...f.error, http_status: f.status, transient: f.transient });

const refusal = (type: string, message: string): GraphFailure => ({
  ok: false,
  transient: false,
  status: null,
  error: { code: null, subcode: null, type, message, fbtrace_id: null },
});

async function fail(deps: PublishDeps, key: string[], failure: GraphFailure) {
  await markFailed(deps.db, key, providerError(failure));
  return { state: 'failed' } as const;
}

async function markFailed(db: Database, key: string[], error: object) {
  await db.transaction(async (tx) => {
    await tx.query(
      `update public.social_posts set status = 'failed', error = $3
        where organization_id = $1 and id = $2 and status = 'publishing'`,
      [...key, JSON.stringify(error)],
    );
    await release(tx, key);
  });
}

/** A run makes up to a dozen calls and polls a container: the claim outlasts all of them. */
const runSeconds = (config: Config) =>
  Math.ceil(
    (config.social.containerPolls * config.social.containerPollMs +
      (14 + config.social.containerPolls) * config.graph.timeoutMs) /
      1000,
  ) + 30;

export const publishPolicy = (config: Config): JobPolicy => ({
  attempts: config.social.publishAttempts,
  backoffSeconds: config.social.publishBackoffSeconds,
  maxBackoffSeconds: 1800,
  // Instagram containers expire after 24 hours; a post this late is better reported than posted.
  maxAgeSeconds: 24 * 3600,
  leaseSeconds: runSeconds(config),
});

export const publishDeps = (d: JobDeps): PublishDeps => ({
  db: d.db,
  secrets: d.secrets,
  queue: d.queue,
  graph: createGraphPublisher(d.config.graph),
  now: d.now,
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  mediaUrl: d.mediaUrl,
  claimSeconds: runSeconds(d.config),
  containerPolls: d.config.social.containerPolls,
  containerPollMs: d.config.social.containerPollMs,
  metricsIntervalSeconds: d.config.social.metricsIntervalSeconds,
});

export function publishSocialPostJob(jobDeps: JobDeps): JobDefinition<PublishJob> {
  const deps = publishDeps(jobDeps);
  const publishes = jobDeps.metrics?.publishes;
  return {
    name: PUBLISH_JOB,
    policy: publishPolicy(jobDeps.config),
    async run(job) {
      let o: PublishOutcome;
      try {
        o = await publishOnce(deps, job.data);
      } catch (err) {
        publishes?.inc({ outcome: 'error' });
        throw err;
      }
      publishes?.inc({ outcome: o.state });
      if (o.state === 'retry') return { status: 'retry', error: o.error };
      if (o.state !== 'skipped')
        jobDeps.log.info({ post_id: job.data.post_id, state: o.state }, 'social post');
      return { status: 'done' };
    },
    async onFailed(job, failure) {
      // Retries exhausted, or the sweep found the job failed or gone: the last error, and why we
      // stopped. Only a post still publishing for this job's schedule changes.
      const last = failure.error;
      const error =
        last instanceof Error
          ? { type: last.name, message: last.message }
          : last && typeof last === 'object'
            ? last
            : { message: String(last) };
      await giveUpPublishing(deps.db, job.data, { ...error, gave_up: failure.reason });
    },
    unsettled: UNPUBLISHED_POSTS,
  };
}

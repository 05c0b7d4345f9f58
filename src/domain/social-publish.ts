import type { Database, Queryable } from '../platform/db/database.ts';
import type { Queue } from '../platform/queue/queue.ts';

// How a scheduled post reaches the publisher (src/jobs/publish-social-post.ts): a job per
// schedule, enqueued in the transaction that schedules the post, starting at scheduled_at. The
// job carries the time it was made for, so a post moved to another time (which enqueues a new
// job) or cancelled leaves its old job with nothing to do.

export const PUBLISH_JOB = 'publish-social-post';

export type PublishJob = { organization_id: string; post_id: string; scheduled_at: string };

/**
 * The key a schedule's job is enqueued with (one job per post and time; the time in epoch
 * milliseconds, as a Date holds it): `UNPUBLISHED_POSTS` builds the same from the row.
 */
export const publishKey = (job: PublishJob) =>
  `${job.organization_id}/${job.post_id}/${new Date(job.scheduled_at).getTime()}`;

/**
 * Posts due and not yet out that no live run holds, for the sweep (JobDefinition.unsettled): the
 * job's data as enqueuePublish made it (the time in milliseconds, like toISOString).
 */
export const UNPUBLISHED_POSTS = `select
    p.organization_id::text || '/' || p.id::text || '/'
      || floor(extract(epoch from p.scheduled_at) * 1000)::bigint::text as key,
    jsonb_build_object('organization_id', p.organization_id, 'post_id', p.id,
      'scheduled_at', to_char(p.scheduled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) as data,
    p.scheduled_at as since
  from public.social_posts p
  left join app.social_publications s on s.organization_id = p.organization_id and s.post_id = p.id
 where p.status in ('scheduled', 'publishing') and p.scheduled_at <= now()
   and not coalesce(s.claimed_until > now(), false)`;

/**
 * Enqueues the publication of a post scheduled for `scheduled_at`, inside `tx` (the caller's
 * transaction that set that schedule). Call it on every move to `scheduled` and every change of
 * scheduled_at; earlier jobs need not be removed. Returns the job's id.
 */
export async function enqueuePublish(
  tx: Queryable,
  queue: Queue,
  post: { organization_id: string; post_id: string; scheduled_at: Date | string },
): Promise<string> {
  const at = new Date(post.scheduled_at);
  if (Number.isNaN(at.getTime()))
    throw new Error(`enqueuePublish: bad scheduled_at ${String(post.scheduled_at)}`);
  const data: PublishJob = {
    organization_id: post.organization_id,
    post_id: post.post_id,
    scheduled_at: at.toISOString(),
  };
  // Keyed by post and time: the sweep finds the job from the row (docs/jobs.md "The sweep").
  return queue.enqueue(tx, PUBLISH_JOB, data, { startAfter: at, key: publishKey(data) });
}

/** Within a millisecond of the job's time: the job's time is the post's, at a Date's precision. */
const THIS_SCHEDULE = 'abs(extract(epoch from p.scheduled_at - $3::timestamptz)) < 0.001';

/**
 * Fails a post from outside a run (its job gave up, or the sweep found the job failed or gone),
 * with `error`, only for the job's own schedule and only while no live run holds the claim: that
 * run records its own outcome, and failing the post under it could contradict a post Meta made,
 * so this throws and the job (or the next sweep) looks again later. A post never claimed is still
 * scheduled: the publisher takes it first (scheduled → publishing → failed, its lifecycle).
 */
export async function giveUpPublishing(db: Database, job: PublishJob, error: object): Promise<void> {
  const values = [job.organization_id, job.post_id, job.scheduled_at];
  await db.transaction(async (tx) => {
    await tx.query(
      `update public.social_posts p set status = 'publishing'
        where p.organization_id = $1 and p.id = $2 and p.status = 'scheduled' and ${THIS_SCHEDULE}`,
      values,
    );
    const [row] = await tx.query<{ failed: boolean; held: boolean }>(
      `with claim as (
         select coalesce(bool_or(s.claimed_until > now()), false) as held from app.social_publications s
          where s.organization_id = $1 and s.post_id = $2),
       failed as (
         update public.social_posts p set status = 'failed', error = $4
          where p.organization_id = $1 and p.id = $2 and p.status = 'publishing' and ${THIS_SCHEDULE}
            and not (select held from claim)
         returning 1)
       select exists (select 1 from failed) as failed, (select held from claim) as held`,
      [...values, JSON.stringify(error)],
    );
    if (!row?.failed && row?.held)
      throw new Error(`post ${job.post_id} is held by a live run; it records its own outcome`);
  });
}

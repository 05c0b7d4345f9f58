import type { Queryable } from '../platform/db/database.ts';
import type { Queue } from '../platform/queue/queue.ts';

// How a scheduled post reaches the publisher (src/jobs/publish-social-post.ts): a job per
// schedule, enqueued in the transaction that schedules the post, starting at scheduled_at. The
// job carries the time it was made for, so a post moved to another time (which enqueues a new
// job) or cancelled leaves its old job with nothing to do.

export const PUBLISH_JOB = 'publish-social-post';

export type PublishJob = { organization_id: string; post_id: string; scheduled_at: string };

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
  return queue.enqueue(tx, PUBLISH_JOB, data, { startAfter: at });
}

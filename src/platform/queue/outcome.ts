import type { JobFailure, JobOutcome, JobPolicy } from './queue.ts';

/** What the queue does after one run: nothing more, run again later, or give up. */
export type Verdict =
  | { action: 'done' }
  | { action: 'retry'; error: unknown }
  | { action: 'give-up'; failure: JobFailure };

/**
 * The retry rule in one place. A transient failure is retried until the attempts are spent or the
 * job is older than its max age, whichever comes first; both are checked after the run, so the
 * error that ended it is the one recorded. `now` is the caller's clock (tests move it).
 */
export function verdict(
  outcome: JobOutcome,
  job: { attempt: number; createdAt: Date },
  policy: JobPolicy,
  now: Date,
): Verdict {
  if (outcome.status === 'done') return { action: 'done' };
  if (outcome.status === 'fail')
    return { action: 'give-up', failure: { reason: 'permanent', error: outcome.error } };
  if (job.attempt >= policy.attempts)
    return { action: 'give-up', failure: { reason: 'attempts', error: outcome.error } };
  if (now.getTime() - job.createdAt.getTime() >= policy.maxAgeSeconds * 1000)
    return { action: 'give-up', failure: { reason: 'max_age', error: outcome.error } };
  return { action: 'retry', error: outcome.error };
}

/** A thrown error is a transient failure: a bug or an outage should not lose the job. */
export async function runSafely(run: () => Promise<JobOutcome>): Promise<JobOutcome> {
  try {
    return await run();
  } catch (error) {
    return { status: 'retry', error };
  }
}

/**
 * The shortest time a policy keeps retrying after the first failure before it gives up, with the
 * backoff at its lowest jitter (pg-boss waits backoff · 2^(k-1) to twice that after the k-th
 * failure, capped): a job that must retry "for at least an hour" checks its policy with this.
 * The max age ends it sooner when it is shorter, but never before it has passed.
 */
export function shortestRetryWindowSeconds(p: JobPolicy): number {
  let total = 0;
  for (let k = 1; k < p.attempts; k++)
    total += Math.min(p.maxBackoffSeconds, p.backoffSeconds * 2 ** (k - 1));
  return Math.min(total, p.maxAgeSeconds);
}

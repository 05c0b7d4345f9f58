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

/**
 * One run, whatever it does: a thrown error (also one thrown before the handler's first await) is
 * a transient failure, since a bug or an outage should not lose the job; a run not settled within
 * `timeoutMs` is one too. That run cannot be stopped and goes on unobserved, but its job is settled
 * now: a handler that never settles neither holds its worker's slot for good nor leaves its job to
 * its lease, and its attempt counts with the reason recorded.
 */
export async function runSafely(run: () => Promise<JobOutcome>, timeoutMs?: number): Promise<JobOutcome> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const running = run();
    if (timeoutMs === undefined) return await running;
    const late = new Promise<JobOutcome>((resolve) => {
      timer = setTimeout(() => resolve({ status: 'retry', error: new RunTimeout(timeoutMs) }), timeoutMs);
      timer.unref();
    });
    return await Promise.race([running, late]);
  } catch (error) {
    return { status: 'retry', error };
  } finally {
    clearTimeout(timer);
  }
}

export class RunTimeout extends Error {
  override name = 'RunTimeout';
  constructor(ms: number) {
    super(`the run did not finish within ${ms} ms, its lease: given up and retried`);
  }
}

/**
 * How long a run may take before runSafely gives it up: inside its lease, since pg-boss fails the
 * whole batch a run belongs to when the batch outlives the longest lease in it (every job of it,
 * finished or not); a second (a tenth of a short lease) is left to record the outcome first.
 */
export const runDeadlineMs = (leaseSeconds: number): number =>
  Math.max(leaseSeconds * 1000 - 1000, leaseSeconds * 900);

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

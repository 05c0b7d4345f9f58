// Every job the worker runs. Each lives in src/jobs/<name>.ts and exports a MakeJob: a function of
// its dependencies (JobDeps, src/jobs/deps.ts) that returns its JobDefinition (src/platform/queue/queue.ts); add it to
// JOBS. An API process registers the same list, so it can enqueue them.

import { openQueue } from '../platform/queue/pg-boss.ts';
import type { Queue } from '../platform/queue/queue.ts';
import { billingGraceEndJob } from './billing-grace-end.ts';
import { checkConnectionsJob, checkUnverifiedAtStart, scheduleNextCheck } from './check-connections.ts';
import type { JobDeps, MakeJob } from './deps.ts';
import { processBillingEventJob } from './process-billing-event.ts';
import { processWebhookEventJob } from './process-webhook-event.ts';
import { publishSocialPostJob } from './publish-social-post.ts';
import { pullSocialMetricsJob } from './pull-social-metrics.ts';
import { purgeExpiredJob, scheduleNextPurge } from './purge-expired.ts';
import { sendMessageJob } from './send-message.ts';

const JOBS: MakeJob[] = [
  sendMessageJob,
  processWebhookEventJob,
  purgeExpiredJob,
  publishSocialPostJob,
  pullSocialMetricsJob,
  processBillingEventJob,
  billingGraceEndJob,
  checkConnectionsJob,
];

/**
 * Recurring jobs: each makes sure its next run is in the queue, idempotently (a keyed enqueue), so
 * every worker calls it at start and only the first call of a period creates the job.
 */
const SCHEDULES: ((deps: JobDeps) => Promise<void>)[] = [
  scheduleNextPurge,
  scheduleNextCheck,
  checkUnverifiedAtStart,
];

/**
 * Opens the queue and registers every job (and `extra`, which tests pass). A worker (`work`) also
 * runs them, returns expired leases to the queue and sweeps for work whose job is gone or failed;
 * otherwise this process only enqueues. `later`: a worker whose runs begin with startWorkLater.
 */
export async function startJobs(
  base: Omit<JobDeps, 'queue'>,
  opts: { work: boolean | 'later'; extra?: MakeJob[] },
): Promise<Queue> {
  const { worker } = base.config;
  const queue = await openQueue(base.db, {
    log: base.log,
    pollIntervalMs: worker.pollMs,
    supervise: opts.work !== false, // a worker's, from its open (its first pass an interval later)
    superviseIntervalSeconds: worker.superviseSeconds,
    sweepIntervalSeconds: worker.sweepSeconds,
    now: base.now,
  });
  try {
    const deps = { ...base, queue };
    await queue.register([...JOBS, ...(opts.extra ?? [])].map((make) => make(deps)));
    if (opts.work === true) await startWork(deps);
  } catch (err) {
    await queue.stop({ timeoutMs: 1000 }).catch(() => {});
    throw err;
  }
  return queue;
}

/** A worker's own start: the recurring jobs scheduled, then the runs, expired leases and sweep. */
async function startWork(deps: JobDeps): Promise<void> {
  // Scheduled first: a worker that starts taking jobs is busy (or, in a test, dead) at once.
  for (const schedule of SCHEDULES) await schedule(deps);
  await deps.queue.work({ concurrency: deps.config.worker.concurrency });
}

/**
 * The inline worker of `svc start`, begun `delayMs` after the service answers rather than before
 * (WORKER_START_DELAY_MS, docs/decisions.md): its first statements (the schedules, expired leases,
 * every slot's first fetch, the sweep) would otherwise be queued on PGlite's one connection ahead
 * of the first requests. A start that fails (the database away at that moment) is logged and
 * tried again after a poll interval. `stop` cancels it, or waits for one in progress, so that
 * the queue is stopped after it.
 */
export function startWorkLater(deps: JobDeps, delayMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let starting: Promise<void> = Promise.resolve();
  const begin = () => {
    starting = startWork(deps).catch((err) => {
      if (stopped) return;
      deps.log.error(
        { err: { message: (err as Error).message } },
        'the worker could not start; trying again',
      );
      timer = setTimeout(begin, deps.config.worker.pollMs);
    });
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(begin, delayMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await starting;
    },
  };
}

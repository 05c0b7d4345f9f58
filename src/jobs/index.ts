// Every job the worker runs. Each lives in src/jobs/<name>.ts and exports a MakeJob: a function of
// its dependencies (JobDeps, src/jobs/deps.ts) that returns its JobDefinition (src/platform/queue/queue.ts); add it to
// JOBS. An API process registers the same list, so it can enqueue them.

import type { BatchLoop, WakeSignal } from '../platform/queue/batch-loop.ts';
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
import { startInboxRouter } from './route-webhook-inbox.ts';
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
 * runs them, routes the webhook inbox (woken by `inbox`, the receipts of this process), returns
 * expired leases to the queue and sweeps for work whose job is gone or failed; otherwise this
 * process only enqueues. `later`: a worker whose runs begin with startWorkLater. The queue's `stop`
 * stops the router first.
 */
export async function startJobs(
  base: Omit<JobDeps, 'queue'>,
  opts: { work: boolean | 'later'; extra?: MakeJob[]; inbox?: WakeSignal },
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
  let router: BatchLoop | undefined;
  try {
    const deps = { ...base, queue };
    await queue.register([...JOBS, ...(opts.extra ?? [])].map((make) => make(deps)));
    if (opts.work === true) router = await startWork(deps, opts.inbox);
  } catch (err) {
    await queue.stop({ timeoutMs: 1000 }).catch(() => {});
    throw err;
  }
  const routing = router;
  if (!routing) return queue;
  return {
    ...queue,
    async stop(o) {
      // The batch in hand commits (or rolls back, its rows kept) before the queue stops.
      await routing.stop(o?.timeoutMs);
      await queue.stop(o);
    },
  };
}

/**
 * A worker's own start: the recurring jobs scheduled, then the runs, expired leases and sweep,
 * and the webhook inbox's router (woken by `inbox`).
 */
async function startWork(deps: JobDeps, inbox: WakeSignal | undefined): Promise<BatchLoop> {
  // Scheduled first: a worker that starts taking jobs is busy (or, in a test, dead) at once.
  for (const schedule of SCHEDULES) await schedule(deps);
  await deps.queue.work({ concurrency: deps.config.worker.concurrency });
  const router = startInboxRouter(deps);
  inbox?.listen(router.wake);
  return router;
}

/**
 * The inline worker of `svc start`, begun `delayMs` after the service answers rather than before
 * (WORKER_START_DELAY_MS, docs/decisions.md): its first statements (the schedules, expired leases,
 * every slot's first fetch, the sweep) would otherwise be queued on PGlite's one connection ahead
 * of the first requests. A start that fails (the database away at that moment) is logged and
 * tried again after a poll interval. `stop` cancels it, or waits for one in progress and stops
 * its inbox router, so that the queue is stopped after it.
 */
export function startWorkLater(
  deps: JobDeps,
  delayMs: number,
  inbox?: WakeSignal,
): { stop(timeoutMs?: number): Promise<void> } {
  let stopped = false;
  let router: BatchLoop | undefined;
  let starting: Promise<void> = Promise.resolve();
  const begin = () => {
    starting = startWork(deps, inbox).then(
      (started) => {
        router = started;
      },
      (err) => {
        if (stopped) return;
        deps.log.error(
          { err: { message: (err as Error).message } },
          'the worker could not start; trying again',
        );
        timer = setTimeout(begin, deps.config.worker.pollMs);
      },
    );
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(begin, delayMs);
  return {
    async stop(timeoutMs) {
      stopped = true;
      clearTimeout(timer);
      await starting;
      await router?.stop(timeoutMs);
    },
  };
}

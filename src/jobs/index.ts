// Every job the worker runs. Each lives in src/jobs/<name>.ts and exports a MakeJob: a function of
// the dependencies below that returns its JobDefinition (src/platform/queue/queue.ts); add it to
// JOBS. An API process registers the same list, so it can enqueue them.

import type { Config } from '../config.ts';
import type { Database } from '../platform/db/database.ts';
import type { Logger } from '../platform/log.ts';
import type { Metrics } from '../platform/metrics/metrics.ts';
import { openQueue } from '../platform/queue/pg-boss.ts';
import type { JobDefinition, Queue } from '../platform/queue/queue.ts';
import type { Secrets } from '../platform/secrets.ts';
import type { ObjectStore } from '../platform/storage/object-store.ts';
import { billingGraceEndJob } from './billing-grace-end.ts';
import { checkConnectionsJob, checkUnverifiedAtStart, scheduleNextCheck } from './check-connections.ts';
import { processBillingEventJob } from './process-billing-event.ts';
import { processWebhookEventJob } from './process-webhook-event.ts';
import { publishSocialPostJob } from './publish-social-post.ts';
import { pullSocialMetricsJob } from './pull-social-metrics.ts';
import { purgeExpiredJob, scheduleNextPurge } from './purge-expired.ts';
import { sendMessageJob } from './send-message.ts';

/** A URL Meta can download a stored file from (a signed URL of the storage bucket), valid that long. */
export type MediaUrl = (storagePath: string, expiresInSeconds: number) => string;

/** What a job may use: the same in `svc start` (worker inline) and `svc worker`. */
export type JobDeps = {
  config: Config;
  db: Database;
  log: Logger;
  now: () => Date;
  queue: Queue;
  /** The bucket's files: the purge removes those of purged posts. Processes that never run the purge (svc webhooks replay, benchmarks) may leave it out. */
  storage?: ObjectStore;
  /** Opens connected accounts' secrets (the sender's access tokens). */
  secrets: Secrets;
  /** Social posts' media for Meta; unset until storage signs URLs (posts with media then fail). */
  mediaUrl?: MediaUrl;
  /** Forgets an organization's cached plan in this process after billing changed it (Services.plans). */
  forgetPlan?: (organizationId: string) => void;
  /** Sends and publishes by outcome, webhook processing lag (src/platform/metrics); absent in one-off commands. */
  metrics?: Metrics;
};

export type MakeJob = (deps: JobDeps) => JobDefinition<never>;

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
 * otherwise this process only enqueues.
 */
export async function startJobs(
  base: Omit<JobDeps, 'queue'>,
  opts: { work: boolean; extra?: MakeJob[] },
): Promise<Queue> {
  const { worker } = base.config;
  const queue = await openQueue(base.db, {
    log: base.log,
    pollIntervalMs: worker.pollMs,
    supervise: opts.work,
    superviseIntervalSeconds: worker.superviseSeconds,
    sweepIntervalSeconds: worker.sweepSeconds,
    now: base.now,
  });
  try {
    const deps = { ...base, queue };
    await queue.register([...JOBS, ...(opts.extra ?? [])].map((make) => make(deps)));
    if (opts.work) {
      // Scheduled first: a worker that starts taking jobs is busy (or, in a test, dead) at once.
      for (const schedule of SCHEDULES) await schedule(deps);
      await queue.work({ concurrency: worker.concurrency });
    }
  } catch (err) {
    await queue.stop({ timeoutMs: 1000 }).catch(() => {});
    throw err;
  }
  return queue;
}

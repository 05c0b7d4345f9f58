// What every job takes: the same in `svc start` (worker inline) and `svc worker`. A file of its own,
// so the jobs and the list of them (index.ts) import it without importing each other.

import type { Config } from '../config.ts';
import type { Database } from '../platform/db/database.ts';
import type { Logger } from '../platform/log.ts';
import type { Metrics } from '../platform/metrics/metrics.ts';
import type { JobDefinition, Queue } from '../platform/queue/queue.ts';
import type { Secrets } from '../platform/secrets.ts';
import type { ObjectStore } from '../platform/storage/object-store.ts';

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

import { purgeConnectStates } from '../domain/connect-state.ts';
import { purgeExpired } from '../domain/retention.ts';
import type { JobDefinition, JobPolicy } from '../platform/queue/queue.ts';
import type { JobDeps } from './deps.ts';

// The daily retention purge (docs/retention.md). One job per UTC day, at PURGE_HOUR_UTC, however
// many workers run: the job is enqueued with the day as its key (Queue.enqueue `key`), so every
// worker's start and every run may ask for the next one and only the first ask creates it. Each
// run asks for the next day's before purging, so a run that fails for good still leaves tomorrow's.

export const PURGE_JOB = 'purge-expired';
export type PurgeJob = { day: string };

/**
 * A run is cheap when there is nothing to purge and harmless twice (rows held by a transaction
 * are skipped, not waited on), so a long lease costs nothing; a failing one retries within the day.
 */
const policy: JobPolicy = {
  attempts: 5,
  backoffSeconds: 300,
  maxBackoffSeconds: 3600,
  maxAgeSeconds: 20 * 3600,
  leaseSeconds: 3600,
};

/** The first PURGE_HOUR_UTC o'clock strictly after `now`. */
export function nextPurgeAt(now: Date, hourUtc: number): Date {
  const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hourUtc));
  if (at <= now) at.setUTCDate(at.getUTCDate() + 1);
  return at;
}

/** Makes sure the next daily run is in the queue (a no-op when a worker already put it there). */
export async function scheduleNextPurge(deps: Pick<JobDeps, 'config' | 'db' | 'now' | 'queue'>) {
  const at = nextPurgeAt(deps.now(), deps.config.purge.hourUtc);
  const day = at.toISOString().slice(0, 10);
  const job: PurgeJob = { day };
  await deps.db.transaction((tx) => deps.queue.enqueue(tx, PURGE_JOB, job, { startAfter: at, key: day }));
}

export function purgeExpiredJob(deps: JobDeps): JobDefinition<PurgeJob> {
  return {
    name: PURGE_JOB,
    slots: 1, // a few runs a day: one slot, polling rarely (JobDefinition.slots, rare)
    rare: true,
    policy,
    async run(job) {
      if (!deps.storage)
        throw new Error('the purge needs the storage bucket (JobDeps.storage) to remove files');
      await scheduleNextPurge(deps);
      const report = await purgeExpired(deps.db, {
        at: deps.now(),
        batchSize: deps.config.purge.batchSize,
        storage: deps.storage,
      });
      // Sign-in states are worthless once expired; kept a day so a late callback still says "expired".
      const connectStates = await purgeConnectStates(deps);
      deps.log.info(
        {
          job: { name: PURGE_JOB, day: job.data.day },
          deleted: { ...report, connect_states: connectStates },
        },
        'retention purge done',
      );
      return { status: 'done' };
    },
  };
}

import type { Database } from '../db/database.ts';
import type { Logger } from '../log.ts';
import { keyedId } from './keyed-id.ts';
import type { Job, JobDefinition, JobFailure, SweepReport } from './queue.ts';

// The sweep (docs/jobs.md "The sweep"): work a job is about (an outbound message, a webhook event,
// a scheduled post) left without an ending while its job has one. pg-boss fails a job on its own
// when its runs are cut off past the retry limit (killed workers), and then no onFailed runs; a job
// may also be gone (deleted once old) or finished while its work was not. Each job definition names
// its unfinished work in SQL (`unsettled`); one statement per batch finds those whose keyed job is
// not live. Work whose job failed is given up (onFailed, reason `attempts`: its retries are spent);
// other work is enqueued again under its key while younger than the policy's max age, and given up
// (`max_age`) once older. Several sweepers may run at once: the enqueue is keyed (one job per key,
// whoever asks), and each onFailed settles only work that is still unsettled.

/** Found work per statement; a pass walks all of it in batches. */
const BATCH = 100;

type Found = {
  key: string;
  data: object;
  since: Date;
  /** The batch's cursor: `since` at full precision (a Date keeps milliseconds only). */
  since_text: string;
  /** The job's state, or null when there is no job under the key. */
  state: string | null;
  output: unknown;
  retry_count: number | null;
};

const find = (unsettled: string) => `with work as (${unsettled})
select w.key, w.data, w.since, w.since::text as since_text, j.state::text as state, j.output, j.retry_count
  from work w
  left join pgboss.job j on j.name = $1 and j.id = app.job_key_id($1, w.key)
 where (j.id is null or j.state > 'active')
   and ($2::timestamptz is null or (w.since, w.key) > ($2::timestamptz, $3::text))
 order by w.since, w.key
 limit ${BATCH}`;

export type SweepDeps = {
  db: Database;
  log: Logger;
  now: () => Date;
  /** Enqueues `data` under `key` in a transaction of its own, replacing a finished job of the key. */
  requeue(name: string, data: object, key: string): Promise<void>;
  /** True once the queue is stopping: the pass ends after the work in hand. */
  stopping(): boolean;
};

/** The error work is given up with when its job failed or went away before it. */
export class JobLost extends Error {
  override name = 'job_lost';
}

/**
 * Passes one at a time in this process: `now()` runs one after any in progress; `start` runs one
 * at once and then one every `intervalSeconds` (a tick finding a pass still going adds none).
 * A pass that fails is logged, and the next one tries again. `stop` waits for the pass in hand,
 * which ends after the work in hand once `deps.stopping()`.
 */
export function sweeper(deps: SweepDeps, definitions: ReadonlyMap<string, JobDefinition<unknown>>) {
  let chain: Promise<unknown> = Promise.resolve();
  let passes = 0; // waiting or running
  let timer: NodeJS.Timeout | undefined;
  function now(): Promise<SweepReport> {
    passes++;
    const pass = chain.then(() => sweep(deps, definitions.values())).finally(() => passes--);
    chain = pass.catch((err) => deps.log.error({ err: { message: (err as Error).message } }, 'sweep failed'));
    return pass;
  }
  const soon = () => void now().catch(() => {}); // logged by the chain
  return {
    now,
    start(intervalSeconds: number) {
      soon();
      timer = setInterval(() => passes || soon(), intervalSeconds * 1000);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await chain;
    },
  };
}

/** One pass over every job with `unsettled`. */
export async function sweep(deps: SweepDeps, definitions: Iterable<JobDefinition<unknown>>) {
  const report: SweepReport = {};
  for (const def of definitions) {
    if (!def.unsettled) continue;
    const counts = { requeued: 0, failed: 0 };
    report[def.name] = counts;
    let after: Found | undefined;
    do {
      const rows: Found[] = await deps.db.query<Found>(find(def.unsettled), [
        def.name,
        after?.since_text ?? null,
        after?.key ?? null,
      ]);
      for (const row of rows) {
        if (deps.stopping()) return report;
        try {
          counts[await settle(deps, def, row)]++;
        } catch (err) {
          // Left for the next pass (an onFailed that found a live run holding the work, say).
          deps.log.warn(
            { job: { name: def.name, key: row.key }, err: { message: (err as Error).message } },
            'sweep could not settle work',
          );
        }
      }
      after = rows.length === BATCH ? rows[BATCH - 1] : undefined;
    } while (after && !deps.stopping());
  }
  return report;
}

async function settle(deps: SweepDeps, def: JobDefinition<unknown>, row: Found) {
  const job: Job<unknown> = {
    id: keyedId(def.name, row.key),
    name: def.name,
    data: row.data,
    attempt: (row.retry_count ?? -1) + 1,
    createdAt: new Date(row.since),
  };
  const where = { job: { name: def.name, key: row.key, state: row.state ?? 'gone' } };
  if (row.state === 'failed')
    return giveUp(deps, def, job, where, {
      reason: 'attempts',
      error: new JobLost(`its runs were cut off and the queue gave up on its job: ${recorded(row.output)}`),
    });
  if (deps.now().getTime() - job.createdAt.getTime() < def.policy.maxAgeSeconds * 1000) {
    await deps.requeue(def.name, row.data, row.key);
    deps.log.warn(where, 'sweep enqueued work again: its job was gone');
    return 'requeued' as const;
  }
  return giveUp(deps, def, job, where, {
    reason: 'max_age',
    error: new JobLost(
      row.state
        ? `its job ended (${row.state}) before the work did`
        : 'its job is gone, and it is too old to retry',
    ),
  });
}

async function giveUp(
  deps: SweepDeps,
  def: JobDefinition<unknown>,
  job: Job<unknown>,
  where: object,
  failure: JobFailure,
) {
  if (!def.onFailed) throw new Error(`job "${def.name}" has unsettled work but no onFailed`);
  await def.onFailed(job, failure);
  deps.log.warn({ ...where, reason: failure.reason }, 'sweep gave up work: its job failed or is gone');
  return 'failed' as const;
}

/** What pg-boss recorded on a failed job: our output ({message}) or its own ({value: {message}}). */
function recorded(output: unknown): string {
  const o = output as { message?: unknown; value?: { message?: unknown } } | null;
  const message = o?.message ?? o?.value?.message;
  return typeof message === 'string' ? message : 'no error was recorded';
}

import { type JobWithMetadata, PgBoss } from 'pg-boss';
import type { Database } from '../db/database.ts';
import { databaseUnavailable } from '../db/unavailable.ts';
import type { Logger } from '../log.ts';
import { databaseExecutor, ownerTransactionExecutor, transactionExecutor } from './adapters.ts';
import { type Run, returnExpiredLeases } from './expired-leases.ts';
import { runsInFlight } from './in-flight.ts';
import { type CapturedInsert, captureInsert, keyedJobsSql } from './job-insert.ts';
import { keyedId } from './keyed-id.ts';
import { runDeadlineMs, runSafely, verdict } from './outcome.ts';
import type { Job, JobDefinition, JobPolicy, Queue } from './queue.ts';
import { sweeper } from './sweep.ts';

export { keyedId };

export type QueueOptions = {
  log: Logger;
  /** How often an idle worker looks for due jobs (pg-boss's floor is 500 ms). */
  pollIntervalMs: number;
  /**
   * Whether this process returns expired leases to the queue, and how often (pg-boss's supervise,
   * at least 1 s). Workers do; an API process that only enqueues does not.
   */
  supervise: boolean;
  superviseIntervalSeconds?: number;
  /** How often a worker sweeps for work whose job is gone or failed (docs/jobs.md "The sweep"). */
  sweepIntervalSeconds?: number;
  /** The clock the max-age rule reads; tests move it. Job timestamps are the database's. */
  now?: () => Date;
};

/** Due jobs a worker slot takes at once (see work). */
const BATCH = 8;

/**
 * How many times less often a queue's other slots look for jobs on their own than its first one
 * (see work): they are woken when there is work for them, and their own polls are a backstop.
 */
const SPARE_POLL_FACTOR = 5;

/** A job name's slots in this process: their pg-boss worker ids, and which run a batch now. */
type Slots = { ids: string[]; busy: boolean[] };

/** The queues working in this process: what abandonRunsInFlight reaches. */
const working = new Set<Queue>();

/**
 * The process is about to die (an uncaught exception, src/cli/crash.ts): every working queue here
 * records the crash on its runs in flight (Queue.abandon). Call it synchronously from the handler.
 */
export function abandonRunsInFlight(error: unknown): Promise<unknown> {
  return Promise.all([...working].map((queue) => queue.abandon(error)));
}

/** pg-boss's schema: outside `public`, so /rest/v1 never serves it, and granted to no tenant role. */
const SCHEMA = 'pgboss';

/**
 * The queue over pg-boss (docs/jobs.md: why pg-boss, and what was measured on PGlite). pg-boss
 * creates and upgrades its own schema at start. It does not own a connection: every statement
 * goes through the service's Database, so PGlite's single connection and PostgreSQL's pool are
 * shared with requests, and a PGlite transaction simply makes the worker's next poll wait.
 */
export async function openQueue(db: Database, opts: QueueOptions): Promise<Queue> {
  const now = opts.now ?? (() => new Date());
  const boss = new PgBoss({
    db: databaseExecutor(db),
    schema: SCHEMA,
    ...(db.engine === 'pglite' ? { backend: 'pglite' } : {}),
    supervise: opts.supervise,
    superviseIntervalSeconds: opts.superviseIntervalSeconds ?? 60,
    // Expired leases are returned in pg-boss's monitor pass, which claims a queue at most once per
    // monitorIntervalSeconds (60 by default) whatever the supervise interval: without this, a
    // killed worker's job waited up to a minute however short WORKER_SUPERVISE_SECONDS was.
    monitorIntervalSeconds: opts.superviseIntervalSeconds ?? 60,
    // pg-boss's cron scheduler and instance registry: nothing here uses them.
    schedule: false,
    registerInstance: false,
  } as ConstructorParameters<typeof PgBoss>[0]);
  // Its loops go on after an error; while the database is away each poll fails alike: a warning.
  boss.on('error', (err) => {
    const line = { err: { message: (err as Error).message } };
    if (databaseUnavailable(err)) opts.log.warn(line, 'job queue: database unavailable');
    else opts.log.error(line, 'job queue error');
  });
  await boss.start();

  const definitions = new Map<string, JobDefinition<unknown>>();
  const inserts = new Map<string, CapturedInsert>();
  let started = false;
  let stopping = false;
  /** This process's slots per job name. */
  const slots = new Map<string, Slots>();
  /** Wakes the queue's first slot not running a batch (or its first, which looks again after it). */
  const wakeIdle = (name: string) => {
    const s = slots.get(name);
    if (!s) return;
    const idle = s.busy.indexOf(false);
    const id = s.ids[idle < 0 ? 0 : idle];
    if (id) boss.notifyWorker(id);
  };
  /**
   * A slot took a full batch, so more jobs may be due: every slot not running a batch looks now.
   * Not only the first of them, which may be one already fetching: the others would then wait
   * for their own poll, and a backlog would run on fewer slots than it has.
   */
  const wakeAllIdle = (name: string) => {
    const s = slots.get(name);
    s?.ids.forEach((id, i) => {
      if (!s.busy[i]) boss.notifyWorker(id);
    });
  };
  const inFlight = runsInFlight();
  const fail = (name: string, runs: Run[], output: object) => boss.fail(name, runs, output);
  const sweeps = sweeper(
    {
      db,
      log: opts.log,
      now,
      stopping: () => stopping,
      requeue: (name, data, key) =>
        db.transaction(async (tx) => {
          await queue.enqueue(tx, name, data, { key, rerun: true });
        }),
    },
    definitions,
  );

  async function runOne(def: JobDefinition<unknown>, raw: JobWithMetadata<unknown>) {
    const job: Job<unknown> = {
      id: raw.id,
      name: raw.name,
      data: raw.data,
      attempt: raw.retryCount + 1,
      createdAt: new Date(raw.createdOn),
    };
    // Given up inside the lease: a run that never settles frees its slot and its job retries.
    const outcome = await runSafely(() => def.run(job), runDeadlineMs(raw.expireInSeconds));
    const next = verdict(outcome, job, def.policy, now());
    if (next.action === 'done') return;
    if (next.action === 'retry') {
      opts.log.warn(
        { job: { name: job.name, id: job.id, attempt: job.attempt }, err: describe(next.error) },
        'job will be retried',
      );
      // Thrown so pg-boss schedules the retry with its backoff.
      throw next.error instanceof Error ? next.error : new Error(describe(next.error).message);
    }
    opts.log.error(
      {
        job: { name: job.name, id: job.id, attempt: job.attempt, reason: next.failure.reason },
        err: describe(next.failure.error),
      },
      'job failed',
    );
    // A throwing onFailed fails this run: pg-boss has one attempt to spare (see retryOptions)
    // and the job gives up again on the next one.
    await def.onFailed?.(job, next.failure);
  }

  /** A slot's handler: its batch's jobs side by side, each settled on its own (perJobResults). */
  const runBatch =
    (def: JobDefinition<unknown>, s: Slots, slot: number) => async (jobs: JobWithMetadata<unknown>[]) => {
      s.busy[slot] = true;
      if (jobs.length >= BATCH) wakeAllIdle(def.name);
      try {
        return await Promise.all(
          jobs.map(async (raw) => {
            const run = { name: def.name, id: raw.id, retryCount: raw.retryCount };
            try {
              await inFlight.track(run, () => runOne(def, raw));
              return { id: raw.id, status: 'completed' as const };
            } catch (error) {
              // Failed: pg-boss retries it with the job's backoff (see retryOptions).
              return { id: raw.id, status: 'failed' as const, output: describe(error) };
            }
          }),
        );
      } finally {
        s.busy[slot] = false;
      }
    };

  const queue: Queue = {
    async register(defs) {
      const all = defs as JobDefinition<unknown>[];
      // Which queues exist, in one statement rather than one per job name (each start registers
      // them all, on PGlite's one connection before the service answers).
      const existing = new Set((await boss.getQueues(all.map((d) => d.name))).map((q) => q.name));
      for (const def of all) {
        // The queue holds only defaults; every job carries its policy (enqueue), so a changed
        // policy applies to the jobs enqueued after it without touching the queue.
        if (!existing.has(def.name)) await boss.createQueue(def.name, retryOptions(def.policy));
        inserts.set(def.name, await captureInsert(boss, def.name, retryOptions(def.policy)));
        definitions.set(def.name, def);
      }
    },
    async enqueue(tx, name, data, eo = {}) {
      // Known names only: the queue must exist, and pg-boss's lookup of an unknown one would
      // query outside this transaction (a deadlock on PGlite's single connection).
      const def = definitions.get(name);
      if (!def) throw new Error(`unknown job "${name}": register it first`);
      const keyed = eo.key === undefined ? undefined : keyedId(name, eo.key);
      const executor = eo.owner ? ownerTransactionExecutor(tx) : transactionExecutor(tx);
      // A finished job of the key makes way: the insert below then succeeds, and a live one stays.
      if (keyed && eo.rerun)
        await executor.executeSql(
          `delete from ${SCHEMA}.job where name = $1 and id = $2 and state > 'active'`,
          [name, keyed],
        );
      const id = await boss.send(name, data, {
        db: executor,
        ...retryOptions(def.policy),
        ...(eo.startAfter !== undefined ? { startAfter: eo.startAfter } : {}),
        // The job's id is derived from the key: pg-boss inserts `on conflict do nothing`, so the
        // second enqueue of a key inserts nothing (and answers null) in every process.
        ...(keyed ? { id: keyed } : {}),
      });
      if (id) return id;
      if (keyed) return keyed;
      throw new Error(`job "${name}" was not created`);
    },
    keyedJobsSql(name, rows) {
      const insert = inserts.get(name);
      if (!insert) throw new Error(`unknown job "${name}": register it first`);
      return keyedJobsSql(insert, rows);
    },
    async complete(name, id, tx) {
      // includeQueued: pg-boss otherwise completes only a job a worker holds, and the point here
      // is a job no worker has taken yet.
      await boss.complete(name, id, null, {
        includeQueued: true,
        ...(tx ? { db: transactionExecutor(tx) } : {}),
      });
    },
    async work(wo = {}) {
      if (started || stopping) return;
      // Before fetching: runs a dead worker held come back now, not at the first supervise pass.
      // A failure here leaves nothing started, so a later call starts afresh.
      const returned = await returnExpiredLeases(db, [...definitions.keys()], fail);
      if (returned) opts.log.warn({ jobs: returned }, 'returned jobs whose lease ran out');
      if (started || stopping) return; // another call got here first, or the queue is stopping
      started = true;
      working.add(queue);
      // A queue's slots are separate pg-boss workers: the first looks for due jobs every poll
      // interval, the others SPARE_POLL_FACTOR times less often on their own, and are woken when
      // there is work for them: a wake of this process goes to an idle slot, and a slot that took
      // a full batch (more may be due) wakes the others. An idle worker's polls are then about one
      // per queue, not one per slot, and a backlog still spreads over every slot.
      for (const def of definitions.values()) {
        const count = Math.min(def.slots ?? Number.POSITIVE_INFINITY, wo.concurrency ?? 1);
        const s: Slots = { ids: [], busy: [] };
        slots.set(def.name, s);
        for (let slot = 0; slot < count; slot++) {
          s.busy.push(false);
          const spare = slot > 0 || def.rare === true;
          const pollMs = spare ? opts.pollIntervalMs * SPARE_POLL_FACTOR : opts.pollIntervalMs;
          const id = await boss.work(
            def.name,
            {
              includeMetadata: true,
              pollingIntervalSeconds: pollMs / 1000,
              // A slot takes up to BATCH due jobs at a time, runs them side by side, settles each on
              // its own (perJobResults), and fetches again at once while batches come back full: a
              // backlog drains at the jobs' own speed, not one job per poll interval and slot.
              batchSize: BATCH,
              burstWhenBatchFull: true,
              perJobResults: true,
            },
            runBatch(def, s, slot),
          );
          s.ids.push(id);
        }
      }
      // Once now (what a crash loop or a long outage left behind), then on a timer.
      sweeps.start(opts.sweepIntervalSeconds ?? 60);
    },
    wake: wakeIdle,
    sweep: () => sweeps.now(),
    async abandon(error) {
      const { runs, culprit } = inFlight.take(); // before any await: see take
      const crashed = {
        message: 'the worker process crashed while this job ran (another run threw)',
        crashed: true,
      };
      await Promise.all(
        runs.map((r) =>
          fail(r.name, [r], r.id === culprit ? { ...describe(error), crashed: true } : crashed),
        ),
      );
    },
    async stop(so = {}) {
      stopping = true;
      working.delete(queue);
      await sweeps.stop(); // a pass ends after the work in hand
      // close: false: the database belongs to the service, which closes it after the queue.
      await boss.stop({ graceful: true, close: false, timeout: so.timeoutMs ?? 10_000 });
    },
  };
  return queue;
}

/** A policy in pg-boss's terms. */
function retryOptions(p: JobPolicy) {
  return {
    // One attempt beyond the policy's: outcome.ts decides when to give up, and pg-boss's own last
    // resort is kept for an onFailed that threw.
    retryLimit: p.attempts,
    retryDelay: p.backoffSeconds,
    retryBackoff: true,
    retryDelayMax: p.maxBackoffSeconds,
    expireInSeconds: p.leaseSeconds,
  };
}

/** An error as a log line may carry it: name, message and code, never data the job was about. */
function describe(error: unknown) {
  if (error instanceof Error) return { name: error.name, message: error.message };
  if (error && typeof error === 'object') {
    // A provider's error body (Graph API: {code, message, …}) as a handler passes it on.
    const { code, message } = error as { code?: unknown; message?: unknown };
    return { code: String(code ?? ''), message: String(message ?? '') };
  }
  return { message: String(error) };
}

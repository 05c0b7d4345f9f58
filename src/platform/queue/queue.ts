// The job queue as the rest of the service sees it: a job is enqueued in the caller's own
// transaction (so it commits or rolls back with the row it is about), and a worker runs it later
// with retries. One implementation (pg-boss.ts, over pg-boss); docs/jobs.md says why.

import type { Queryable } from '../db/database.ts';

/** How a job of one name is retried. Every figure is per job name; tests shorten them. */
export type JobPolicy = {
  /** Runs in all, the first included. */
  attempts: number;
  /** The first retry waits this long to twice it (random jitter); each later wait doubles. */
  backoffSeconds: number;
  /** No single delay is longer than this. */
  maxBackoffSeconds: number;
  /** A job this old is failed instead of run again, however many attempts are left. */
  maxAgeSeconds: number;
  /** A run not finished by then is presumed dead (a killed or hung worker): the job runs again. */
  leaseSeconds: number;
};

/** What a handler says about one run. A thrown error counts as `retry`. */
export type JobOutcome =
  | { status: 'done' }
  /** Transient (timeout, 5xx, throttling): run again after the backoff, if attempts and age allow. */
  | { status: 'retry'; error: unknown }
  /** Permanent (refused for good): never run again; `onFailed` is called. */
  | { status: 'fail'; error: unknown };

export type Job<T> = {
  id: string;
  name: string;
  data: T;
  /** 1 on the first run. */
  attempt: number;
  createdAt: Date;
};

export type JobFailure = {
  /** permanent: the handler said so; attempts: the last one failed; max_age: too old to retry. */
  reason: 'permanent' | 'attempts' | 'max_age';
  error: unknown;
};

/**
 * One kind of job: src/jobs/<name>.ts exports a function of the service's dependencies that
 * returns one of these (see src/jobs/index.ts).
 */
export type JobDefinition<T = unknown> = {
  name: string;
  policy: JobPolicy;
  run(job: Job<T>): Promise<JobOutcome>;
  /**
   * Called once when the job gives up, so the domain can record it (a message becomes `failed`).
   * If it throws, the job is run again later and gives up again, so it must be idempotent.
   */
  onFailed?(job: Job<T>, failure: JobFailure): Promise<void>;
  /**
   * The work this job is about that has not reached an ending, for the sweep (docs/jobs.md "The
   * sweep"): SQL run on the service path that selects one row per piece of work, with `key` (the
   * key its job was enqueued with), `data` (the job's data) and `since` (when the work was made: its
   * max age counts from there), leaving out work a live run holds (a claim not yet run out). Work
   * whose job is gone is enqueued again under its key while younger than the policy's max age;
   * work whose job failed, or that is older, goes to `onFailed`. Jobs without it are not swept.
   */
  unsettled?: string;
  /**
   * How many of a worker's slots take this job (at most the worker's concurrency; by default all
   * of them). The first slot polls every interval and the others five times less often (they are
   * woken when there is work, pg-boss.ts): a job that comes a few times a day takes one slot (which
   * still runs a batch of due jobs side by side) and spares PostgreSQL even those polls.
   */
  slots?: number;
  /**
   * Due a few times a day and never waited on by a person: its slots all poll five times less
   * often than the interval (a run is found within 5 × WORKER_POLL_MS of its due time), so an
   * idle worker spends its polls on the jobs people wait for.
   */
  rare?: boolean;
};

export type EnqueueOptions = {
  /** Not before this moment (or this many seconds from now). */
  startAfter?: Date | number;
  /**
   * At most one job of this name and key, ever (until the queue forgets finished jobs): a second
   * enqueue with the same key, from this process or another, creates nothing and returns the first
   * job's id. For work that must happen once per period whoever asks (the daily purge).
   */
  key?: string;
  /**
   * With `key`: a finished job of that key (completed, failed, cancelled) is replaced by this one,
   * so the work runs again; a live one (waiting, retrying, running) is kept and nothing is added.
   */
  rerun?: boolean;
  /**
   * `tx` is a transaction with owner privileges (`db.transaction`), not a caller's: the job is
   * inserted without switching roles around it (one statement, not four).
   */
  owner?: boolean;
};

/** What one sweep did per job name: work enqueued again, work given up as failed. */
export type SweepReport = Record<string, { requeued: number; failed: number }>;

export interface Queue {
  /** Makes these job names known: their queues and policies. Before enqueue or work. */
  register(definitions: JobDefinition<never>[]): Promise<void>;
  /**
   * Adds a job inside `tx`, the caller's open transaction (db.transaction or db.asPrincipal): it
   * exists only if that transaction commits. Returns the job's id.
   */
  enqueue(tx: Queryable, name: string, data: object, opts?: EnqueueOptions): Promise<string>;
  /**
   * The same enqueue as SQL, for a caller's own statement: a data-modifying statement (a CTE of
   * that statement) that adds one job of `name` per row of `rows`, SQL selecting `key text` and
   * `data` (json), each as `enqueue(tx, name, data, {key})` would add it. It returns the ids of the
   * jobs it added: none for a key that already has one. Owner privileges, as any job insert.
   */
  keyedJobsSql(name: string, rows: string): string;
  /**
   * Marks a job done without running it (the request that made it already did the work); with
   * `tx`, inside that open transaction, so it commits with what recorded the work.
   */
  complete(name: string, id: string, tx?: Queryable): Promise<void>;
  /**
   * Jobs of `name` were just committed: one of this process's slots of it not running a batch
   * fetches now instead of at its next poll (nothing when this process does not work).
   */
  wake(name: string): void;
  /** Starts running every registered job in this process; `concurrency` runs per job name. */
  work(opts?: { concurrency?: number }): Promise<void>;
  /**
   * Finds the work of every job with `unsettled` whose job is gone or failed, and enqueues it again
   * or gives it up (docs/jobs.md "The sweep"). A worker runs it when it starts and then on a timer;
   * several workers may run it at once.
   */
  sweep(): Promise<SweepReport>;
  /**
   * The process is about to die (an uncaught exception): each run in flight here is failed now,
   * fenced to its attempt, so the attempt counts at once with the error recorded instead of when
   * its lease runs out. The run the error came from gets the error; the others are told the worker
   * crashed. Call it synchronously from the exception's handler (that is how the run is known).
   */
  abandon(error: unknown): Promise<void>;
  /** Stops fetching, waits up to `timeoutMs` for runs in flight, then stops the queue. */
  stop(opts?: { timeoutMs?: number }): Promise<void>;
}

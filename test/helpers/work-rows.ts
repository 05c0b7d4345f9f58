import type { Database } from '../../src/platform/db/database.ts';
import { keyedId } from '../../src/platform/queue/pg-boss.ts';
import type { Job, JobDefinition, JobFailure, JobPolicy, Queue } from '../../src/platform/queue/queue.ts';

// Work for the queue's own tests (test/platform/queue-*.test.ts and the worker processes they
// start), shaped like an outbound message and its send: a row in public.test_work with a status,
// and a job about it enqueued under the row's id. A run that settles marks the row done; onFailed
// marks it failed with the error's message while it is pending; `unsettled` lists the pending rows
// for the sweep.

export const CREATE_WORK = `create table if not exists public.test_work (
  id uuid primary key default gen_random_uuid(), job text not null, status text not null default 'pending',
  error text, runs integer not null default 0, created_at timestamptz not null default now())`;

/** One attempt (pg-boss's retry limit 1: two runs), short leases and waits. */
export const ONE_ATTEMPT: JobPolicy = {
  attempts: 1,
  backoffSeconds: 1,
  maxBackoffSeconds: 1,
  maxAgeSeconds: 3600,
  leaseSeconds: 1,
};

export type Work = { id: string };

/** `db`: the database of the worker that runs it (a dying one, for a worker that dies). */
export function workJob(
  name: string,
  db: Database,
  run: (job: Job<Work>) => Promise<unknown>,
  policy: JobPolicy = ONE_ATTEMPT,
) {
  const failures: JobFailure[] = [];
  const def: JobDefinition<Work> = {
    name,
    policy,
    async run(job) {
      await run(job);
      await db.query(
        `update public.test_work set status = 'done', runs = runs + 1 where id = $1 and status = 'pending'`,
        [job.data.id],
      );
      return { status: 'done' };
    },
    async onFailed(job, failure) {
      const [row] = await db.query(
        `update public.test_work set status = 'failed', error = $2 where id = $1 and status = 'pending'
         returning id`,
        [job.data.id, (failure.error as Error).message],
      );
      if (row) failures.push(failure);
    },
    unsettled: `select w.id::text as key, jsonb_build_object('id', w.id) as data, w.created_at as since
                  from public.test_work w where w.job = '${name}' and w.status = 'pending'`,
  };
  return { def: def as JobDefinition<never>, failures };
}

/** A row and its job (unless `job: false`), committed together as a request would; its id. */
export async function addWork(
  db: Database,
  queue: Queue,
  name: string,
  opts: { age?: string; job?: boolean } = {},
): Promise<string> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string }>(
      'insert into public.test_work (job, created_at) values ($1, now() - $2::interval) returning id',
      [name, opts.age ?? '0 seconds'],
    );
    const id = (row as { id: string }).id;
    if (opts.job !== false) await queue.enqueue(tx, name, { id }, { key: id });
    return id;
  });
}

export const workRow = async (db: Database, id: string) =>
  (
    await db.query<{ job: string; status: string; error: string | null; runs: number }>(
      'select job, status, error, runs from public.test_work where id = $1',
      [id],
    )
  )[0];

export const jobOf = async (db: Database, name: string, id: string) =>
  (
    await db.query<{ state: string; retry_count: number; output: Record<string, unknown> | null }>(
      'select state, retry_count, output from pgboss.job where name = $1 and id = $2',
      [name, keyedId(name, id)],
    )
  )[0];

export async function until(check: () => boolean | Promise<boolean>) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 50));
}

export const NEVER = new Promise<never>(() => {});

/** A run in which its worker's process dies: it never returns, and the worker makes no statement again. */
export const diesIn = (worker: { kill(): void }) => () => {
  worker.kill();
  return NEVER;
};

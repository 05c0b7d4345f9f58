// What this file protects: a job commits or rolls back with the caller's transaction; a transient
// failure is retried until it succeeds, once; a permanent one, the last attempt and a job past its
// max age reach onFailed once and stop; a run that hangs is given up at its lease without holding
// its worker; two workers on one PostgreSQL run each job once. Real databases, both engines; no time is asserted.

import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/platform/db/database.ts';
import { openQueue } from '../../src/platform/queue/pg-boss.ts';
import type {
  JobDefinition,
  JobFailure,
  JobOutcome,
  JobPolicy,
  Queue,
} from '../../src/platform/queue/queue.ts';
import { type FreshDatabase, freshDatabase, onPostgres, openTestPostgres } from '../helpers/db.ts';
import { until } from '../helpers/work-rows.ts';

const silent = pino({ level: 'silent' });
// Short delays so retries happen within the test; the rule is the same as in production.
const POLICY: JobPolicy = {
  attempts: 5,
  backoffSeconds: 1,
  maxBackoffSeconds: 1,
  maxAgeSeconds: 3600,
  leaseSeconds: 60,
};
const ANON: Principal = { kind: 'anon', claims: { role: 'anon' } };

let fresh: FreshDatabase;
const open: Queue[] = [];
let seq = 0;
const uniqueName = (tag: string) => `test-${tag}-${process.pid}-${++seq}`;

beforeAll(async () => {
  fresh = await freshDatabase();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((q) => q.stop({ timeoutMs: 1000 })));
});
afterAll(async () => {
  await fresh.drop();
});

async function startQueue(
  jobs: JobDefinition<never>[],
  opts: {
    now?: () => Date;
    work?: boolean;
    db?: FreshDatabase['db'];
    concurrency?: number;
    pollIntervalMs?: number;
  } = {},
) {
  const queue = await openQueue(opts.db ?? fresh.db, {
    log: silent,
    pollIntervalMs: opts.pollIntervalMs ?? 500,
    supervise: true,
    superviseIntervalSeconds: 1,
    now: opts.now,
  });
  open.push(queue);
  await queue.register(jobs);
  if (opts.work !== false) await queue.work({ concurrency: opts.concurrency ?? 2 });
  return queue;
}

const jobState = async (id: string) =>
  (
    await fresh.db.query<{ state: string; retry_count: number }>(
      'select state, retry_count from pgboss.job where id = $1',
      [id],
    )
  )[0];

/** A job definition whose runs answer from a script, recording each attempt and any failure. */
function scripted(
  name: string,
  answers: (attempt: number) => JobOutcome | Promise<JobOutcome>,
  policy = POLICY,
) {
  const runs: number[] = [];
  const failures: JobFailure[] = [];
  const def: JobDefinition<{ n?: number }> = {
    name,
    policy,
    async run(job) {
      runs.push(job.attempt);
      return answers(job.attempt);
    },
    async onFailed(_job, failure) {
      failures.push(failure);
    },
  };
  return { def: def as JobDefinition<never>, runs, failures };
}

/** The database with every fetch of the named job's slots counted (pg-boss sends it as a script). */
function countingFetches(...names: string[]) {
  const fetches = new Map(names.map((n) => [n, 0]));
  const db: FreshDatabase['db'] = Object.create(fresh.db);
  db.script = (text) => {
    if (/WITH\s+next AS/.test(text))
      for (const n of names) if (text.includes(n)) fetches.set(n, (fetches.get(n) ?? 0) + 1);
    return fresh.db.script(text);
  };
  return { db, fetches: (name = names[0] as string) => fetches.get(name) ?? 0 };
}

describe('job queue', () => {
  it('a job enqueued in a transaction that rolls back never exists; committed, it runs once', async () => {
    const name = uniqueName('tx');
    const job = scripted(name, () => ({ status: 'done' }));
    const queue = await startQueue([job.def], { work: false });
    await expect(
      fresh.db.asPrincipal(ANON, async (tx) => {
        await queue.enqueue(tx, name, { n: 1 });
        throw new Error('the request failed after its insert');
      }),
    ).rejects.toThrow('the request failed');
    const [id, roleAfter] = await fresh.db.asPrincipal(ANON, async (tx) => {
      const jobId = await queue.enqueue(tx, name, { n: 2 });
      // The enqueue ran as the owner; the rest of the request is the caller's again.
      const [row] = await tx.query<{ role: string }>('select current_user as role');
      return [jobId, row?.role] as const;
    });
    expect(roleAfter).toBe('anon');
    const rows = await fresh.db.query<{ data: { n: number } }>(
      'select data from pgboss.job where name = $1',
      [name],
    );
    expect(rows.map((r) => r.data.n)).toEqual([2]);
    await queue.work();
    await until(async () => (await jobState(id))?.state === 'completed');
    expect(job.runs).toEqual([1]);
  });

  it("the job tables are out of every tenant role's reach", async () => {
    const rows = await fresh.db.query<{ role: string; usage: boolean }>(
      `select r as role, has_schema_privilege(r, 'pgboss', 'usage') as usage
         from unnest(array['anon', 'authenticated', 'service_role']) as r`,
    );
    expect(rows.filter((r) => r.usage)).toEqual([]);
  });

  it('a job completed by its enqueuer before it is due never runs', async () => {
    const name = uniqueName('complete');
    const ran: string[] = [];
    const def: JobDefinition<never> = {
      name,
      policy: POLICY,
      async run(job) {
        ran.push(job.id);
        return { status: 'done' };
      },
    };
    const queue = await startQueue([def]);
    const id = await fresh.db.transaction((tx) => queue.enqueue(tx, name, {}, { startAfter: 1 }));
    await queue.complete(name, id);
    // Due after the first one: once it has run, the worker has looked past the first one's time.
    const next = await fresh.db.transaction((tx) => queue.enqueue(tx, name, {}, { startAfter: 2 }));
    await until(async () => (await jobState(next))?.state === 'completed');
    expect(ran).toEqual([next]);
    expect((await jobState(id))?.state).toBe('completed');
  });

  it('an unknown job name is refused before anything is written', async () => {
    const queue = await startQueue([], { work: false });
    await expect(
      fresh.db.transaction((tx) => queue.enqueue(tx, 'nobody-registered-this', {})),
    ).rejects.toThrow(/unknown job/);
  });

  it('a transient failure is retried with backoff until the run that succeeds, which happens once', async () => {
    const name = uniqueName('transient');
    const job = scripted(name, (attempt) =>
      attempt < 3 ? { status: 'retry', error: new Error('provider 503') } : { status: 'done' },
    );
    const queue = await startQueue([job.def]);
    const id = await fresh.db.transaction((tx) => queue.enqueue(tx, name, {}));
    await until(async () => (await jobState(id))?.state === 'completed');
    expect(job.runs).toEqual([1, 2, 3]);
    expect(job.failures).toEqual([]);
    expect((await jobState(id))?.retry_count).toBe(2);
  });

  it('a thrown error is a transient failure, retried like one', async () => {
    const name = uniqueName('throws');
    const job = scripted(name, (attempt) => {
      if (attempt === 1) throw new Error('socket hang up');
      return { status: 'done' };
    });
    const queue = await startQueue([job.def]);
    const id = await fresh.db.transaction((tx) => queue.enqueue(tx, name, {}));
    await until(async () => (await jobState(id))?.state === 'completed');
    expect(job.runs).toEqual([1, 2]);
  });

  it('a permanent failure is not retried, and onFailed hears it once', async () => {
    const name = uniqueName('permanent');
    const job = scripted(name, () => ({ status: 'fail', error: { code: 190, message: 'invalid token' } }));
    const queue = await startQueue([job.def]);
    const id = await fresh.db.transaction((tx) => queue.enqueue(tx, name, {}));
    await until(async () => (await jobState(id))?.state === 'completed');
    expect(job.runs).toEqual([1]);
    expect(job.failures).toEqual([{ reason: 'permanent', error: { code: 190, message: 'invalid token' } }]);
  });

  it('a job that keeps failing gives up after its last attempt, and onFailed hears it once', async () => {
    const name = uniqueName('attempts');
    const job = scripted(name, () => ({ status: 'retry', error: new Error('timeout') }), {
      ...POLICY,
      attempts: 2,
    });
    const queue = await startQueue([job.def]);
    const id = await fresh.db.transaction((tx) => queue.enqueue(tx, name, {}));
    await until(async () => (await jobState(id))?.state === 'completed');
    expect(job.runs).toEqual([1, 2]);
    expect(job.failures.map((f) => f.reason)).toEqual(['attempts']);
  });

  it('a job older than its max age fails at its next transient failure instead of being retried', async () => {
    const name = uniqueName('max-age');
    let ahead = 0; // the clock the max-age rule reads, moved forward during the second run
    const job = scripted(
      name,
      (attempt) => {
        if (attempt === 2) ahead = 2 * 3600_000;
        return { status: 'retry', error: new Error('provider 500') };
      },
      { ...POLICY, attempts: 100 },
    );
    const queue = await startQueue([job.def], { now: () => new Date(Date.now() + ahead) });
    const id = await fresh.db.transaction((tx) => queue.enqueue(tx, name, {}));
    await until(async () => (await jobState(id))?.state === 'completed');
    expect(job.runs).toEqual([1, 2]);
    expect(job.failures.map((f) => f.reason)).toEqual(['max_age']);
  });

  it('an onFailed that throws is tried again on a later run', async () => {
    const name = uniqueName('on-failed-throws');
    let calls = 0;
    const def: JobDefinition<never> = {
      name,
      policy: POLICY,
      run: async () => ({ status: 'fail', error: 'refused' }),
      async onFailed() {
        calls++;
        if (calls === 1) throw new Error('database briefly unavailable');
      },
    };
    const queue = await startQueue([def]);
    const id = await fresh.db.transaction((tx) => queue.enqueue(tx, name, {}));
    await until(async () => (await jobState(id))?.state === 'completed');
    expect(calls).toBe(2);
  });

  it('a run that never settles is given up at its lease: the job runs again, and the worker takes other jobs meanwhile', async () => {
    const name = uniqueName('lease');
    const runs: { n?: number; attempt: number }[] = [];
    const def: JobDefinition<{ n?: number }> = {
      name,
      policy: { ...POLICY, leaseSeconds: 1 },
      run(job) {
        runs.push({ n: job.data.n, attempt: job.attempt });
        // The first run of job 1 hangs for good, as a handler waiting on something that never comes.
        if (job.data.n === 1 && job.attempt === 1) return new Promise<JobOutcome>(() => {});
        return Promise.resolve({ status: 'done' });
      },
    };
    // One slot: a run that held it for good would stop this worker for every job of the name.
    const queue = await startQueue([def as JobDefinition<never>], { concurrency: 1 });
    const hung = await fresh.db.transaction((tx) => queue.enqueue(tx, name, { n: 1 }));
    await until(() => runs.length > 0);
    const other = await fresh.db.transaction((tx) => queue.enqueue(tx, name, { n: 2 }));
    await until(async () => (await jobState(other))?.state === 'completed');
    await until(async () => (await jobState(hung))?.state === 'completed');
    // The hung run counted as an attempt; the job's second run finished it.
    expect(await jobState(hung)).toEqual({ state: 'completed', retry_count: 1 });
    expect(runs.filter((r) => r.n === 1).map((r) => r.attempt)).toEqual([1, 2]);
    expect(runs.filter((r) => r.n === 2).map((r) => r.attempt)).toEqual([1]);
  });

  it('a job whose every run hangs ends failed after its last attempt, with the timeout recorded', async () => {
    const name = uniqueName('always-hangs');
    const job = scripted(name, () => new Promise<JobOutcome>(() => {}), {
      ...POLICY,
      attempts: 2,
      leaseSeconds: 1,
    });
    const queue = await startQueue([job.def]);
    const id = await fresh.db.transaction((tx) => queue.enqueue(tx, name, {}));
    await until(async () => (await jobState(id))?.state === 'completed');
    expect(job.runs).toEqual([1, 2]);
    expect(job.failures).toMatchObject([
      { reason: 'attempts', error: { message: expect.stringMatching(/did not finish within 900 ms/) } },
    ]);
  });

  it('an idle worker looks for jobs about once a poll interval however many slots it has', async () => {
    const name = uniqueName('idle');
    const job = scripted(name, () => ({ status: 'done' }));
    const { db: counted, fetches } = countingFetches(name);
    await startQueue([job.def], { db: counted, concurrency: 4 });
    await new Promise((r) => setTimeout(r, 3000));
    // The first slot every 500 ms (7 in 3 s), the three others every 2.5 s (2 each): 13, with
    // room for a late timer. Four slots each on its own 500 ms poll make 24 to 28.
    expect(fetches()).toBeGreaterThan(0);
    expect(fetches()).toBeLessThanOrEqual(16);
  });

  it('a rare job polls five times less often, and its due runs still run', async () => {
    const often = uniqueName('often');
    const rare = uniqueName('rare');
    const oftenJob = scripted(often, () => ({ status: 'done' }));
    const rareJob = scripted(rare, () => ({ status: 'done' }));
    const { db, fetches } = countingFetches(often, rare);
    const queue = await startQueue([oftenJob.def, { ...rareJob.def, slots: 1, rare: true }], {
      db,
      concurrency: 1,
    });
    await new Promise((r) => setTimeout(r, 3000));
    // 500 ms against 2.5 s: 7 fetches in 3 s against 2, with room for a late timer.
    expect(fetches(often)).toBeGreaterThanOrEqual(5);
    expect(fetches(rare)).toBeLessThanOrEqual(2);
    const id = await fresh.db.transaction((tx) => queue.enqueue(tx, rare, {}));
    await until(async () => (await jobState(id))?.state === 'completed');
    expect(rareJob.runs).toEqual([1]);
  });

  it('a backlog runs on every slot, not only the one that found it', async () => {
    const name = uniqueName('backlog');
    let running = 0;
    let most = 0;
    let openGate: () => void = () => {};
    const gate = new Promise<void>((r) => (openGate = r));
    const def: JobDefinition<{ n?: number }> = {
      name,
      policy: POLICY,
      async run() {
        most = Math.max(most, ++running);
        // More runs at once than one slot's batch (8): another slot has taken its share.
        if (running > 8) openGate();
        await gate;
        running--;
        return { status: 'done' };
      },
    };
    // Polls a minute apart, each slot's first fetch made before the jobs exist: one wake brings the
    // backlog to the first slot, and only its full batch can call the others in.
    const { db, fetches } = countingFetches(name);
    const queue = await startQueue([def as JobDefinition<never>], {
      db,
      concurrency: 4,
      pollIntervalMs: 60_000,
    });
    await until(() => fetches() >= 4);
    const ids = await fresh.db.transaction(async (tx) => {
      const made: string[] = [];
      for (let i = 0; i < 40; i++) made.push(await queue.enqueue(tx, name, { n: i }));
      return made;
    });
    queue.wake(name);
    const completed = async () =>
      (
        await fresh.db.query<{ n: number }>(
          `select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'`,
          [name],
        )
      )[0]?.n === ids.length;
    await until(completed);
    expect(most).toBeGreaterThan(8);
  });

  it('a job this process wakes while its first slot is busy runs on another slot at once', async () => {
    const name = uniqueName('wake');
    const started: number[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const def: JobDefinition<{ n: number }> = {
      name,
      policy: POLICY,
      async run(job) {
        started.push(job.data.n);
        // The first job holds its slot until the second has started beside it.
        if (job.data.n === 1) await held;
        else release();
        return { status: 'done' };
      },
    };
    // Polls a minute apart: only the wake can bring the second job in while the first runs.
    const queue = await startQueue([def as JobDefinition<never>], { concurrency: 2, pollIntervalMs: 60_000 });
    await fresh.db.transaction((tx) => queue.enqueue(tx, name, { n: 1 }));
    queue.wake(name);
    await until(() => started.length === 1);
    await fresh.db.transaction((tx) => queue.enqueue(tx, name, { n: 2 }));
    queue.wake(name);
    await until(() => started.length === 2);
    expect(started).toEqual([1, 2]);
  });

  it.skipIf(!onPostgres())(
    'two workers on one PostgreSQL run each of 200 jobs exactly once (PostgreSQL only: PGlite is one process and one connection)',
    async () => {
      await fresh.db.query('create table if not exists public.queue_test_runs (job_id uuid, worker text)');
      const name = uniqueName('two-workers');
      const worker = (label: string): JobDefinition<never> => ({
        name,
        policy: POLICY,
        async run(job) {
          await fresh.db.query('insert into public.queue_test_runs values ($1, $2)', [job.id, label]);
          return { status: 'done' };
        },
      });
      // Each worker with its own pool, as two processes would have.
      const other = openTestPostgres(fresh.url as string, 5);
      try {
        const a = await startQueue([worker('a')], { work: false });
        const b = await startQueue([worker('b')], { work: false, db: other });
        await fresh.db.transaction(async (tx) => {
          for (let i = 0; i < 200; i++) await a.enqueue(tx, name, { n: i });
        });
        await Promise.all([a.work({ concurrency: 4 }), b.work({ concurrency: 4 })]);
        const done = async () =>
          (
            await fresh.db.query<{ n: number }>(
              `select count(*)::int as n from pgboss.job where name = $1 and state = 'completed'`,
              [name],
            )
          )[0]?.n === 200;
        await until(done);
        const [runs] = await fresh.db.query<{ total: number; distinct_jobs: number }>(
          'select count(*)::int as total, count(distinct job_id)::int as distinct_jobs from public.queue_test_runs',
        );
        expect(runs).toEqual({ total: 200, distinct_jobs: 200 });
        await Promise.all(open.splice(0).map((q) => q.stop({ timeoutMs: 1000 })));
      } finally {
        await other.close();
      }
    },
  );
});

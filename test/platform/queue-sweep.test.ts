// What this file protects (issue 26, section 5): work is never left unsettled because its job
// ended without it. Work whose job pg-boss failed on its own (two runs cut off by dead workers
// past a retry limit of 1, so no onFailed ran) is given up by the sweep, once, with the reason;
// work whose job is gone is enqueued again, one job however many sweep at once, or given up once
// too old to retry; work whose job is live is left alone. The job ids the sweep looks up in SQL
// are the ones the queue makes. Workers "die" in this process (dying-database.ts), on both
// engines; no time is asserted.

import { describe, expect, it } from 'vitest';
import { keyedId } from '../../src/platform/queue/pg-boss.ts';
import { dyingDatabase } from '../helpers/dying-database.ts';
import { workDatabase } from '../helpers/work-database.ts';
import { addWork, diesIn, jobOf, NEVER, until, workJob, workRow } from '../helpers/work-rows.ts';

const work = workDatabase();
let seq = 0;
const uniqueName = (tag: string) => `test-sweep-${tag}-${process.pid}-${++seq}`;

const row = (id: string) => workRow(work.db, id);
const jobState = (name: string, id: string) => jobOf(work.db, name, id);

describe('job ids', () => {
  it('the id a key gives is the same in TypeScript (keyedId) and in SQL (app.job_key_id)', async () => {
    const cases: [string, string][] = [
      ['send-message', '6f1c2d9e-0000-4000-8000-000000000001/6f1c2d9e-0000-4000-8000-000000000002'],
      ['publish-social-post', 'org/post/1767261600123'],
      ['purge-expired', '2026-11-24'],
      ['x', ''],
      ['ünïcödé ✓', 'key with spaces, a \\ and a 🦜'],
    ];
    for (const [name, key] of cases) {
      const [r] = await work.db.query<{ id: string }>('select app.job_key_id($1, $2)::text as id', [
        name,
        key,
      ]);
      expect({ name, key, id: r?.id }).toEqual({ name, key, id: keyedId(name, key) });
    }
  });
});

describe('the sweep', () => {
  it('gives up work whose job pg-boss failed (retry limit 1, two runs cut off), once, with the reason', async () => {
    const name = uniqueName('cut-off');
    // Run 1: a worker killed in the run; its lease (1 s) runs out.
    const one = dyingDatabase(work.db);
    const a = await work.worker([workJob(name, one.db, diesIn(one)).def], one.db);
    const id = await addWork(work.db, a, name);
    await until(async () => (await jobState(name, id))?.state === 'active');
    await new Promise((r) => setTimeout(r, 1500));
    // Run 2: the next worker takes it back at its start, runs it, and is killed too.
    const two = dyingDatabase(work.db);
    await work.worker([workJob(name, two.db, diesIn(two)).def], two.db);
    await until(async () => (await jobState(name, id))?.retry_count === 1);
    await until(async () => (await jobState(name, id))?.state === 'active');
    await new Promise((r) => setTimeout(r, 1500));
    // The third worker's start returns that lease at the retry limit: pg-boss fails the job itself
    // and no onFailed runs for it; the sweep that follows is the work's way out.
    const job = workJob(name, work.db, () => NEVER);
    await work.worker([job.def]);
    await until(async () => (await row(id))?.status === 'failed');
    expect((await jobState(name, id))?.state).toBe('failed');
    expect(job.failures).toMatchObject([{ reason: 'attempts' }]);
    expect(await row(id)).toMatchObject({
      runs: 0,
      error: expect.stringMatching(/runs were cut off .*: its lease ran out while a worker held it/),
    });
  });

  it('enqueues work whose job is gone again, one job however many sweep, and gives up work too old to retry', async () => {
    const name = uniqueName('gone');
    const job = workJob(name, work.db, async () => {});
    const idle = await work.worker([job.def], undefined, false);
    const other = await work.worker([job.def], undefined, false);
    // Rows whose job the queue lost (deleted, or a database restored without its jobs).
    const young = await addWork(work.db, idle, name, { job: false });
    const old = await addWork(work.db, idle, name, { job: false, age: '2 hours' });
    const waiting = await addWork(work.db, idle, name); // its job is live: nothing to do
    const reports = await Promise.all([idle.sweep(), other.sweep()]);
    expect(reports.reduce((n, r) => n + (r[name]?.requeued ?? 0), 0)).toBeGreaterThanOrEqual(1);
    const [jobs] = await work.db.query<{ n: number }>(
      "select count(*)::int as n from pgboss.job where name = $1 and data->>'id' = $2",
      [name, young],
    );
    expect(jobs?.n).toBe(1);
    expect(await row(old)).toMatchObject({ status: 'failed', error: expect.stringMatching(/job is gone/) });
    expect(job.failures).toMatchObject([{ reason: 'max_age' }]);
    await work.worker([job.def]);
    await until(async () => (await row(young))?.status === 'done' && (await row(waiting))?.status === 'done');
    expect(await row(young)).toMatchObject({ runs: 1 });
    expect(await row(waiting)).toMatchObject({ runs: 1 });
  });
});

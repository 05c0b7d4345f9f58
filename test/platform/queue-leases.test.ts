// What this file protects (issue 26, section 5): a job held by a worker that died does not wait
// for a supervise pass of a surviving one (while workers crash-loop there may be none): the next
// worker to start takes it back, the lost run counted as an attempt, and runs it. The worker
// "dies" in this process (dying-database.ts), on both engines; its lease is a second long.

import { describe, expect, it } from 'vitest';
import { dyingDatabase } from '../helpers/dying-database.ts';
import { workDatabase } from '../helpers/work-database.ts';
import { addWork, diesIn, jobOf, until, workJob, workRow } from '../helpers/work-rows.ts';

const work = workDatabase();

describe('a worker killed mid-run', () => {
  it('leaves its job to the next worker, which takes it back when it starts, not at its first supervise pass', async () => {
    const name = `test-lease-${process.pid}`;
    const first = dyingDatabase(work.db);
    // The process dies inside the run.
    const dying = await work.worker([workJob(name, first.db, diesIn(first)).def], first.db);
    const id = await addWork(work.db, dying, name);
    await until(async () => (await jobOf(work.db, name, id))?.state === 'active');
    // Its lease (1 s) runs out with nobody to notice: the dead worker's queue can record nothing.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await jobOf(work.db, name, id))?.state).toBe('active');
    const job = workJob(name, work.db, async () => {});
    await work.worker([job.def]);
    await until(async () => (await workRow(work.db, id))?.status === 'done');
    // pg-boss completes the job just after the handler has recorded its work.
    await until(async () => (await jobOf(work.db, name, id))?.state === 'completed');
    expect(await jobOf(work.db, name, id)).toMatchObject({ state: 'completed', retry_count: 1 });
    expect(job.failures).toEqual([]);
  });
});

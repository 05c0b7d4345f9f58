// What this file protects (issue 26, section 5): a job held by a worker that died does not wait
// for a supervise pass of a surviving one (while workers crash-loop there may be none): the next
// worker to start takes it back, the lost run counted as an attempt, and runs it. The worker
// "dies" in this process (dying-database.ts), on both engines; its lease is a second long.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Queue } from '../../src/platform/queue/queue.ts';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { dyingDatabase } from '../helpers/dying-database.ts';
import {
  addWork,
  CREATE_WORK,
  diesIn,
  jobOf,
  quietWorker,
  until,
  workJob,
  workRow,
} from '../helpers/work-rows.ts';

let fresh: FreshDatabase;
const open: Queue[] = [];

beforeAll(async () => {
  fresh = await freshDatabase();
  await fresh.db.query(CREATE_WORK);
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((q) => q.stop({ timeoutMs: 500 })));
});
afterAll(async () => {
  await fresh.drop();
});

describe('a worker killed mid-run', () => {
  it('leaves its job to the next worker, which takes it back when it starts, not at its first supervise pass', async () => {
    const name = `test-lease-${process.pid}`;
    const first = dyingDatabase(fresh.db);
    // The process dies inside the run.
    const dying = await quietWorker(open, [workJob(name, first.db, diesIn(first)).def], first.db);
    const id = await addWork(fresh.db, dying, name);
    await until(async () => (await jobOf(fresh.db, name, id))?.state === 'active');
    // Its lease (1 s) runs out with nobody to notice: the dead worker's queue can record nothing.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await jobOf(fresh.db, name, id))?.state).toBe('active');
    const job = workJob(name, fresh.db, async () => {});
    await quietWorker(open, [job.def], fresh.db);
    await until(async () => (await workRow(fresh.db, id))?.status === 'done');
    expect(await jobOf(fresh.db, name, id)).toMatchObject({ state: 'completed', retry_count: 1 });
    expect(job.failures).toEqual([]);
  });
});

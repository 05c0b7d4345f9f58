// What this file protects (issue 26, section 6): a crash in one job is that job's problem. A job
// whose run throws outside its handler and any try (in a timer: an uncaught exception) ends the
// worker process that runs it; each such death is recorded on the job as an attempt with the
// error before the process exits (Queue.abandon, from src/cli/crash.ts), so after its retry limit
// the job ends `failed` with that error, and the sweep of the next worker gives its work up with
// it. The other jobs, cut off beside it or not, are done by the restarted workers.
// Both engines: workers that crash in this process (the abandon, then a dying database). On
// PostgreSQL also real worker processes (poison-worker.ts) that exit with code 1, restarted as a
// supervisor would (PGlite lives in one process, so the test could not read it meanwhile).

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Queue } from '../../src/platform/queue/queue.ts';
import { exited } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/db.ts';
import { dyingDatabase } from '../helpers/dying-database.ts';
import { workDatabase } from '../helpers/work-database.ts';
import { addWork, jobOf, NEVER, until, workJob, workRow } from '../helpers/work-rows.ts';
import { HEALTHY, healthyJob, POISON, POISON_ERROR, poisonJob } from './poison-jobs.ts';

const work = workDatabase();
const children: ChildProcess[] = [];
const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-poison-'));

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a job that throws outside its handler, in this process', () => {
  it('each crash counts as an attempt with its error; after the retry limit the job fails and the sweep gives its work up', async () => {
    const name = `test-crashing-${process.pid}`;
    /** A worker whose run throws in a timer; the process records the crash (abandon) and dies. */
    async function crashingWorker() {
      const dying = dyingDatabase(work.db);
      let queue: Queue | undefined;
      const crashing = workJob(name, dying.db, () => {
        setTimeout(() => {
          // What src/cli/crash.ts does on the uncaught exception this throw would be.
          void (queue as Queue).abandon(new Error(POISON_ERROR)).then(dying.kill);
        });
        return NEVER;
      });
      queue = await work.worker([crashing.def], dying.db);
      return queue;
    }
    const first = await crashingWorker();
    const id = await addWork(work.db, first, name);
    // The crash counts at once, with its error: no lease has to run out.
    await until(async () => (await jobOf(work.db, name, id))?.state === 'retry');
    expect((await jobOf(work.db, name, id))?.output).toEqual({
      name: 'Error',
      message: POISON_ERROR,
      crashed: true,
    });
    await crashingWorker();
    await until(async () => (await jobOf(work.db, name, id))?.state === 'failed');
    expect(await jobOf(work.db, name, id)).toMatchObject({
      retry_count: 1,
      output: { message: POISON_ERROR },
    });
    const job = workJob(name, work.db, () => NEVER);
    await work.worker([job.def]);
    await until(async () => (await workRow(work.db, id))?.status === 'failed');
    expect((await workRow(work.db, id))?.error).toBe(
      `its runs were cut off and the queue gave up on its job: ${POISON_ERROR}`,
    );
    expect(job.failures).toMatchObject([{ reason: 'attempts' }]);
  });
});

describe('a job that throws outside its handler, in worker processes', () => {
  it.skipIf(!onPostgres())(
    'crashes each worker it reaches (exit 1), ends failed after its retry limit with the error, and every other job is done',
    async () => {
      // Only to enqueue: the workers are the child processes.
      const deps = { db: work.db } as Parameters<typeof poisonJob>[0];
      const queue = await work.worker([poisonJob(deps), healthyJob(deps)], undefined, false);
      const poison = await addWork(work.db, queue, POISON);
      const healthy: string[] = [];
      for (let i = 0; i < 6; i++) healthy.push(await addWork(work.db, queue, HEALTHY));
      const settled = async () => {
        for (const id of [poison, ...healthy])
          if ((await workRow(work.db, id))?.status === 'pending') return false;
        return true;
      };
      const script = path.join(import.meta.dirname, 'poison-worker.ts');
      const env = {
        ...process.env,
        DATABASE_URL: work.url as string,
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        WORKER_POLL_MS: '500',
        // Only what a worker's start does returns leases and sweeps.
        WORKER_SUPERVISE_SECONDS: '3600',
        WORKER_SWEEP_SECONDS: '3600',
      };
      // The supervisor: a worker that dies is started again, until all the work has an ending.
      const exits: (number | string | null)[] = [];
      for (;;) {
        const child = spawn(process.execPath, ['--import', 'tsx', script], { env });
        children.push(child);
        while (child.exitCode === null && child.signalCode === null && !(await settled()))
          await new Promise((r) => setTimeout(r, 100));
        if (child.exitCode === null && child.signalCode === null) break;
        exits.push(await exited(child));
      }
      // One death per run of the poison: its one attempt and the spare one.
      expect(exits).toEqual([1, 1]);
      expect(await jobOf(work.db, POISON, poison)).toMatchObject({
        state: 'failed',
        retry_count: 1,
        output: { message: POISON_ERROR, crashed: true },
      });
      expect(await workRow(work.db, poison)).toMatchObject({
        status: 'failed',
        runs: 0,
        error: `its runs were cut off and the queue gave up on its job: ${POISON_ERROR}`,
      });
      for (const id of healthy) expect(await workRow(work.db, id)).toMatchObject({ status: 'done', runs: 1 });
    },
  );
});

// What this file protects: `npm start` runs the job worker in process unless WORKER=off, a stop
// waits for it, an API process with WORKER=off only enqueues (a worker elsewhere runs the job),
// and `svc worker` runs alone and stops cleanly on SIGTERM.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { MakeJob } from '../../src/jobs/deps.ts';
import { startJobs } from '../../src/jobs/index.ts';
import type { JobPolicy } from '../../src/platform/queue/queue.ts';
import { freshDatabase, onPostgres } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';

const POLICY: JobPolicy = {
  attempts: 3,
  backoffSeconds: 1,
  maxBackoffSeconds: 1,
  maxAgeSeconds: 3600,
  leaseSeconds: 60,
};
const FAST = { WORKER_POLL_MS: '500', WORKER_SUPERVISE_SECONDS: '1' };

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function until(check: () => boolean) {
  while (!check()) await new Promise((r) => setTimeout(r, 50));
}

/** A job that records the data of each run. */
function recorder(name: string) {
  const seen: unknown[] = [];
  const make: MakeJob = () => ({
    name,
    policy: POLICY,
    async run(job) {
      seen.push(job.data);
      return { status: 'done' };
    },
  });
  return { make, seen };
}

describe('the worker beside the API', () => {
  it('runs jobs in the service process by default (WORKER=inline) and stops with it', async () => {
    const job = recorder('test-inline');
    const service = await startTestService(FAST, { jobs: [job.make] });
    try {
      const { db, queue } = service.services;
      await db.transaction((tx) => queue.enqueue(tx, 'test-inline', { hello: 'world' }));
      await until(() => job.seen.length > 0);
      expect(job.seen).toEqual([{ hello: 'world' }]);
    } finally {
      await service.stop();
    }
  });

  it('with WORKER=off the service only enqueues, and a worker elsewhere runs the job', async () => {
    const inService = recorder('test-elsewhere');
    const job = recorder('test-elsewhere');
    const service = await startTestService({ ...FAST, WORKER: 'off' }, { jobs: [inService.make] });
    cleanups.push(() => service.stop());
    const { db, queue } = service.services;
    await db.transaction((tx) => queue.enqueue(tx, 'test-elsewhere', { n: 1 }));
    // The in-process stand-in for `svc worker` (which cannot load a test's job): the same
    // startJobs over the same database, as a worker.
    const config = loadConfig({ ...FAST, DATA_DIR: service.dataDir });
    const worker = await startJobs(
      {
        config,
        db,
        log: pino({ level: 'silent' }),
        now: () => new Date(),
        secrets: service.services.secrets,
      },
      { work: true, extra: [job.make] },
    );
    cleanups.push(() => worker.stop());
    await until(() => job.seen.length > 0);
    expect(job.seen).toEqual([{ n: 1 }]);
    expect(inService.seen).toEqual([]);
  });
});

describe('svc worker', () => {
  it('runs alone, then stops cleanly on SIGTERM', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-worker-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const env: Record<string, string> = { DATA_DIR: dir, LOG_LEVEL: 'silent' };
    if (onPostgres()) {
      const fresh = await freshDatabase();
      await fresh.db.close();
      cleanups.push(() => fresh.drop());
      env.DATABASE_URL = fresh.url as string;
    }
    const bin = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
    const child = spawn(process.execPath, [bin, 'worker'], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await until(() => out.includes('svc worker running') || child.exitCode !== null);
    expect(out).toContain('svc worker running');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

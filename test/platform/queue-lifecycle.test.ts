// What this file protects: `npm start` runs the job worker in process unless WORKER=off, a stop
// waits for it, an API process with WORKER=off only enqueues (a worker elsewhere runs the job),
// and `svc worker` runs alone and stops cleanly on SIGTERM. The inline worker begins
// WORKER_START_DELAY_MS after the service answers: its first statements never stand before the
// first requests on PGlite's one connection, a stop before it began is clean, and a start that
// fails is tried again.

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
import type { Database } from '../../src/platform/db/database.ts';
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

/** `db` with every statement it is asked to run recorded, and the first one matching `fails` failed. */
function recording(db: Database, fails?: RegExp) {
  const statements: string[] = [];
  let failed = false;
  const record = (sql: string) => {
    statements.push(sql);
    if (fails && !failed && fails.test(sql)) {
      failed = true;
      throw new Error('the database went away for a moment');
    }
  };
  const wrapped: Database = {
    ...db,
    query: async (sql, params) => {
      record(sql);
      return db.query(sql, params);
    },
    script: async (sql) => {
      record(sql);
      return db.script(sql);
    },
  };
  return { db: wrapped, statements };
}

// A worker's statements of its own: a slot's fetch (pg-boss), the return of expired leases.
const LEASES = /select j\.name, j\.id, j\.retry_count from pgboss\.job/;
const isWorkers = (sql: string) => /WITH next AS/.test(sql) || LEASES.test(sql);

describe('the inline worker begins after the service answers (WORKER_START_DELAY_MS)', () => {
  it('answers /health before any statement of its worker, then runs the jobs enqueued meanwhile', async () => {
    const job = recorder('test-later');
    const fresh = await freshDatabase();
    const { db, statements } = recording(fresh.db);
    const service = await startTestService(
      { ...FAST, WORKER_START_DELAY_MS: '3000' },
      { jobs: [job.make], database: db, databaseUrl: fresh.url },
    );
    try {
      const health = await fetch(`${service.url}/health`);
      expect(health.status).toBe(200);
      // The worker's polls would have stood before it on PGlite's one connection.
      expect(statements.filter(isWorkers)).toEqual([]);
      // A job enqueued by a request meanwhile waits in the queue, and runs once the worker begins.
      await db.transaction((tx) => service.services.queue.enqueue(tx, 'test-later', { early: true }));
      await until(() => job.seen.length > 0);
      expect(job.seen).toEqual([{ early: true }]);
      expect(statements.some(isWorkers)).toBe(true);
    } finally {
      await service.stop();
      await fresh.drop();
    }
  });

  it('a stop before the worker began is clean, and the worker never starts after it', async () => {
    const fresh = await freshDatabase();
    const { db, statements } = recording(fresh.db);
    const service = await startTestService(
      { ...FAST, WORKER_START_DELAY_MS: '60000' },
      { database: db, databaseUrl: fresh.url },
    );
    await service.stop();
    await fresh.drop();
    expect(statements.filter(isWorkers)).toEqual([]);
    expect(service.logs()).not.toContain('could not start');
    expect(service.logs()).toContain('"msg":"stopped"');
  });

  it('a worker start that fails (the database away at that moment) is logged and tried again', async () => {
    const job = recorder('test-later-retry');
    const fresh = await freshDatabase();
    // The return of expired leases, the worker start's last statement before its first fetch.
    const { db } = recording(fresh.db, LEASES);
    const service = await startTestService(
      { ...FAST, WORKER_START_DELAY_MS: '200' },
      { jobs: [job.make], database: db, databaseUrl: fresh.url },
    );
    try {
      await db.transaction((tx) => service.services.queue.enqueue(tx, 'test-later-retry', { n: 1 }));
      await until(() => job.seen.length > 0);
      expect(job.seen).toEqual([{ n: 1 }]);
      const failure = service.logLines().find((l) => l.msg === 'the worker could not start; trying again');
      expect(failure?.err).toMatchObject({ message: 'the database went away for a moment' });
    } finally {
      await service.stop();
      await fresh.drop();
    }
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

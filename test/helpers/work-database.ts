// The queue tests' database and workers (test/platform/queue-*.test.ts). Apart from work-rows.ts,
// which the worker processes those tests start import too: this file needs vitest.
import pino from 'pino';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Database } from '../../src/platform/db/database.ts';
import { openQueue } from '../../src/platform/queue/pg-boss.ts';
import type { JobDefinition, Queue } from '../../src/platform/queue/queue.ts';
import { type FreshDatabase, freshDatabase } from './db.ts';
import { CREATE_WORK } from './work-rows.ts';

/**
 * This file's database with the work table (a private copy, dropped after the file), and its
 * workers: queues whose supervise pass and sweep timer are an hour away, so only what their start
 * does (or a sweep the test asks for) is seen, stopped after each test. `worker` runs over this
 * database unless given another (a dying one); with `work: false` it only enqueues and sweeps.
 */
export function workDatabase() {
  let fresh: FreshDatabase | undefined;
  const open: Queue[] = [];
  beforeAll(async () => {
    fresh = await freshDatabase();
    await fresh.db.query(CREATE_WORK);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((q) => q.stop({ timeoutMs: 500 })));
  });
  afterAll(async () => {
    await fresh?.drop();
  });
  const current = () => {
    if (!fresh) throw new Error('the work database is made in beforeAll');
    return fresh;
  };
  return {
    get db() {
      return current().db;
    },
    get url() {
      return current().url;
    },
    async worker(defs: JobDefinition<never>[], db: Database = current().db, work = true) {
      const queue = await openQueue(db, {
        log: pino({ level: 'silent' }),
        pollIntervalMs: 500,
        supervise: true,
        superviseIntervalSeconds: 3600,
        sweepIntervalSeconds: 3600,
      });
      open.push(queue);
      await queue.register(defs);
      if (work) await queue.work({ concurrency: 2 });
      return queue;
    },
  };
}

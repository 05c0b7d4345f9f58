// The daily purge job (src/jobs/purge-expired.ts): a worker's start puts the next run in the queue
// for PURGE_HOUR_UTC, once however many workers start (a keyed job per UTC day); the run purges
// and puts the next day's run in the queue. The clock is the service's (`now`), moved by the test.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJobs } from '../../src/jobs/index.ts';
import { nextPurgeAt, PURGE_JOB } from '../../src/jobs/purge-expired.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { backdate, count, item, order, organization } from './seed.ts';

describe('nextPurgeAt', () => {
  it.each([
    ['2026-11-24T01:00:00Z', 3, '2026-11-24T03:00:00.000Z'],
    ['2026-11-24T03:00:00Z', 3, '2026-11-25T03:00:00.000Z'],
    ['2026-11-24T23:59:59Z', 0, '2026-11-25T00:00:00.000Z'],
    ['2026-12-31T05:00:00Z', 3, '2027-01-01T03:00:00.000Z'],
  ])('after %s at hour %i is %s', (now, hour, next) => {
    expect(nextPurgeAt(new Date(now), hour).toISOString()).toBe(next);
  });
});

const start = new Date();
const hour = (start.getUTCHours() + 2) % 24;
const firstRun = nextPurgeAt(start, hour);
const dayOf = (d: Date) => d.toISOString().slice(0, 10);
let clock = start;
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService(
    { WORKER: 'inline', WORKER_POLL_MS: '500', PURGE_HOUR_UTC: String(hour) },
    { now: () => clock },
  );
});
afterAll(() => svc?.stop());

const purgeJobs = () =>
  svc.services.db.query<{ day: string; state: string; start_after: Date }>(
    `select data->>'day' as day, state, start_after from pgboss.job where name = $1 order by start_after`,
    [PURGE_JOB],
  );

describe('the daily job', () => {
  it('is in the queue once for the next PURGE_HOUR_UTC, however many workers start', async () => {
    const s = svc.services;
    const second = await startJobs(
      { config: s.config, db: s.db, log: s.log, now: () => clock, secrets: s.secrets },
      { work: true },
    );
    await second.stop({ timeoutMs: 1000 });
    const jobs = await purgeJobs();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.day).toBe(dayOf(firstRun));
    expect(new Date(jobs[0]?.start_after as Date).toISOString()).toBe(firstRun.toISOString());
  });

  it('when due, purges and puts the next day’s run in the queue', async () => {
    const db = svc.services.db;
    const free = await organization(db, 'free');
    const old = await order(db, free, await item(db, free, 'S-1', 5), 1, ['cancelled']);
    await backdate(db, 'public.orders', ['created_at', 'updated_at'], 31, 'id = $1', [old]);
    // The hour has come: the service's clock moves past it, and the job is due for pg-boss.
    clock = new Date(firstRun.getTime() + 1000);
    await db.query('update pgboss.job set start_after = now() where name = $1', [PURGE_JOB]);

    const deadline = Date.now() + 30_000;
    while ((await purgeJobs())[0]?.state !== 'completed' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));

    const jobs = await purgeJobs();
    expect(jobs.map((j) => [j.day, j.state])).toEqual([
      [dayOf(firstRun), 'completed'],
      [dayOf(new Date(firstRun.getTime() + 86_400_000)), 'created'],
    ]);
    expect(await count(db, 'public.orders where id = $1', [old])).toBe(0);
    expect(svc.logs()).toContain('retention purge done');
  });
});

// What this file protects (issue 13): a worker killed in the middle of processing a webhook event
// loses nothing and applies nothing twice. The event's run is stopped at the worst moment, after
// it has written everything (the message, the conversation's unread count, the event marked
// processed) and before its commit; after the worker is gone, another one processes the event
// exactly once, when the job's lease (WEBHOOK_LEASE_SECONDS, shortened here) has run out.
//
// PostgreSQL: a real kill. `svc worker` runs in a child process whose job transactions stop
// before their commit (stalling-worker.ts); the test SIGKILLs it there, the server rolls the open
// transaction back, and a fresh `svc worker` process takes the job over.
// PGlite: a simulation, since the embedded database lives inside one process (a second process
// cannot open it beside the test's). In this process a queue with one slot takes the job, its run
// rolls back just before the commit (what the crash leaves in the database) and then never returns
// (what the queue sees of a dead worker); a second queue, started only then, takes the job over
// once the lease runs out. See stop-before-commit.ts.
//
// The same for the inbox router (docs/decisions.md "The durable webhook inbox"): a worker killed
// inside a batch, after it has stored the deliveries, their events and jobs and deleted the inbox
// rows, and before its commit, leaves every acknowledged delivery in the inbox; the next worker
// routes each exactly once (one delivery per body, one event, one job, one message).

import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJobs } from '../../src/jobs/index.ts';
import type { Queue } from '../../src/platform/queue/queue.ts';
import { exited, spawnUntil } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/db.ts';
import { call, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { countOf, deliver, fixture, META_ENV, routeInbox } from './meta.ts';
import { stopBeforeCommit } from './stop-before-commit.ts';

const PHONE_ID = '106540352242922';
const WA_ID = '16315551181';
const WAMID = 'wamid.KILLED_WORKER_ID';
const ENV = {
  ...META_ENV,
  // Longer than the restarted worker takes to start, so its first supervise pass finds the lease
  // still running and only a later pass can return the job: pg-boss expires leases in its monitor
  // pass, which ran once a minute whatever WORKER_SUPERVISE_SECONDS said (src/platform/queue).
  WEBHOOK_LEASE_SECONDS: '5',
  WEBHOOK_RETRY_BACKOFF_SECONDS: '1',
  WORKER_POLL_MS: '500',
  WORKER_SUPERVISE_SECONDS: '1',
};

let svc: TestService;
let owner: Session;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  svc = await startTestService(ENV);
  owner = await signUp(svc, 'Killed worker shop');
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: owner.access_token,
    body: { provider: 'whatsapp', external_id: PHONE_ID, access_token: 'EAAG-token-for-tests' },
  });
  expect(r.status).toBe(201);
});
afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo().catch(() => {});
  await svc?.stop();
});

async function until(check: () => Promise<boolean>, what: string, ms = 15_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

let deliveryId = '';
const eventRow = async () =>
  (
    await svc.services.db.query<{ id: string; status: string; attempts: number; last_error: string | null }>(
      'select id, status, attempts, last_error from app.webhook_events where delivery_id = $1',
      [deliveryId],
    )
  )[0];

/** The event's job(s) in pg-boss's table. */
const jobs = async () =>
  svc.services.db.query<{ state: string; retry_count: number }>(
    "select state, retry_count from pgboss.job where name = 'process-webhook-event' and data->>'event_id' = $1",
    [(await eventRow())?.id],
  );

/** The child's environment: the test service's database and data directory, the test's settings. */
const childEnv = (extra: Record<string, string> = {}) => ({
  ...extra,
  ...ENV,
  DATABASE_URL: svc.databaseUrl as string,
  DATA_DIR: svc.dataDir,
  LOG_LEVEL: 'warn',
});

/**
 * Takes the event's job (or, `watch` app.webhook_inbox, the inbox's batch) in a worker that dies
 * just before committing it; `inside` checks what is visible meanwhile (PostgreSQL only).
 */
async function killWorkerInsideProcessing(
  watch = 'app.webhook_events',
  inside: () => Promise<void> = async () => {
    // Inside the run, uncommitted: nothing of it is visible from outside yet.
    expect(await countOf(svc, 'messages where provider_message_id = $1', [WAMID])).toBe(0);
  },
): Promise<void> {
  if (onPostgres()) {
    const stalling = path.join(import.meta.dirname, 'stalling-worker.ts');
    const { child } = await spawnUntil(
      ['--import', 'tsx', stalling],
      childEnv({ STALL_ON: watch }),
      /stopped before commit/,
    );
    await inside();
    child.kill('SIGKILL');
    expect(await exited(child)).toBe('SIGKILL');
    return;
  }
  let reached = false;
  const s = svc.services;
  const dying = await startJobs(
    {
      ...s,
      // One slot, held by the run that never returns, as a dead process takes no more jobs.
      config: { ...s.config, worker: { ...s.config.worker, concurrency: 1 } },
      db: stopBeforeCommit(
        s.db,
        'rollback',
        () => {
          reached = true;
        },
        watch,
      ),
    },
    { work: true },
  );
  cleanup.push(() => dying.stop({ timeoutMs: 500 }));
  await until(async () => reached, 'the run to reach its commit');
}

/** A fresh worker: `svc worker` in its own process on PostgreSQL, a new queue here on PGlite. Its stop. */
async function restartWorker(): Promise<() => Promise<unknown>> {
  if (onPostgres()) {
    const { child } = await spawnUntil(['worker'], childEnv(), /svc worker running/, { cli: true });
    const stop = () => stopChild(child);
    cleanup.push(stop);
    return stop;
  }
  const queue: Queue = await startJobs(svc.services, { work: true });
  const stop = () => queue.stop({ timeoutMs: 1000 });
  cleanup.push(stop);
  return stop;
}

async function stopChild(child: ChildProcess) {
  child.kill('SIGTERM');
  return exited(child);
}

describe('a worker killed mid-processing', () => {
  it('leaves the event to be processed exactly once after the restart: one message, unread count 1', async () => {
    const body = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_ID, WA_ID, 'wamid.TEXT_ID': WAMID });
    const received = await deliver(svc, body);
    expect(received.status).toBe(200);
    await routeInbox(svc);
    const [stored] = await svc.services.db.query<{ delivery_id: string }>(
      "select delivery_id from app.webhook_events where status = 'pending'",
    );
    deliveryId = stored?.delivery_id as string;
    expect(deliveryId).toMatch(/^[0-9a-f]{64}$/);

    await killWorkerInsideProcessing();
    // The job was taken (never settled: active, or retry once its lease ran out), and the killed
    // run left nothing behind: the event waits, untouched.
    expect(['active', 'retry']).toContain((await jobs())[0]?.state);
    expect(await eventRow()).toMatchObject({ status: 'pending', attempts: 0, last_error: null });
    expect(await countOf(svc, 'messages where provider_message_id = $1', [WAMID])).toBe(0);

    const stopWorker = await restartWorker();
    // The queue marks the job completed after the handler's transaction commits: wait for both.
    await until(
      async () => (await eventRow())?.status === 'processed' && (await jobs())[0]?.state === 'completed',
      'the event to be processed and its job completed',
    );

    // attempts counts runs that recorded an ending: the killed run's increment rolled back with
    // the rest of it. The queue did see two runs: the lease that ran out counted as one.
    expect(await eventRow()).toMatchObject({ status: 'processed', attempts: 1, last_error: null });
    expect(await jobs()).toEqual([{ state: 'completed', retry_count: 1 }]);
    expect(await countOf(svc, 'messages where provider_message_id = $1', [WAMID])).toBe(1);
    const conversations = await svc.services.db.query<{ unread_count: number }>(
      `select v.unread_count from conversations v
         join messages m on m.organization_id = v.organization_id and m.conversation_id = v.id
        where m.provider_message_id = $1`,
      [WAMID],
    );
    expect(conversations).toEqual([{ unread_count: 1 }]);

    // What the owner sees: the message, once.
    const listed = await call(svc, 'GET', `/rest/v1/messages?select=body&provider_message_id=eq.${WAMID}`, {
      token: owner.access_token,
    });
    expect(listed.json).toEqual([{ body: 'Does it come in another color?' }]);
    // Left running, it would route the next test's deliveries before that test's worker dies.
    await stopWorker();
  });
});

describe('a worker killed inside an inbox batch', () => {
  it('leaves every acknowledged delivery in the inbox; the next worker routes each exactly once', async () => {
    const wamids = ['wamid.INBOX_KILLED_1', 'wamid.INBOX_KILLED_2', 'wamid.INBOX_KILLED_3'];
    const bodies = wamids.map((w) =>
      fixture('wa-text', { PHONE_NUMBER_ID: PHONE_ID, WA_ID, 'wamid.TEXT_ID': w }),
    );
    // Four receipts, one of them Meta's retry of the first (the same bytes): one batch.
    for (const body of [...bodies, bodies[0] as string]) expect((await deliver(svc, body)).status).toBe(200);
    expect(await countOf(svc, 'app.webhook_inbox')).toBe(4);
    const stored = (table: string) =>
      countOf(svc, `${table} where payload like any($1)`, [wamids.map((w) => `%${w}%`)]);
    const events = () =>
      countOf(
        svc,
        'app.webhook_events e join app.webhook_deliveries d on d.id = e.delivery where d.payload like any($1)',
        [wamids.map((w) => `%${w}%`)],
      );

    await killWorkerInsideProcessing('app.webhook_inbox', async () => {
      // The batch has stored and deleted everything in its open transaction: none of it shows.
      expect(await countOf(svc, 'app.webhook_inbox')).toBe(4);
      expect(await stored('app.webhook_deliveries')).toBe(0);
    });
    // The killed batch left nothing behind and took nothing away.
    expect(await countOf(svc, 'app.webhook_inbox')).toBe(4);
    expect(await stored('app.webhook_deliveries')).toBe(0);
    expect(await events()).toBe(0);

    await restartWorker();
    const messages = () => countOf(svc, 'messages where provider_message_id = any($1)', [wamids]);
    await until(async () => (await messages()) === 3, 'the three messages');
    expect(await countOf(svc, 'app.webhook_inbox')).toBe(0);
    expect(await stored('app.webhook_deliveries')).toBe(3);
    expect(await events()).toBe(3);
    await until(
      async () =>
        (await countOf(
          svc,
          "app.webhook_events e join app.webhook_deliveries d on d.id = e.delivery where d.payload like any($1) and e.status = 'processed'",
          [wamids.map((w) => `%${w}%`)],
        )) === 3,
      'the three events processed',
    );
    const jobs = await svc.services.db.query<{ n: number }>(
      `select count(*)::int as n from pgboss.job j join app.webhook_events e on e.id::text = j.data->>'event_id'
         join app.webhook_deliveries d on d.id = e.delivery
        where j.name = 'process-webhook-event' and d.payload like any($1)`,
      [wamids.map((w) => `%${w}%`)],
    );
    expect(jobs).toEqual([{ n: 3 }]);
    expect(await messages()).toBe(3);
  });
});

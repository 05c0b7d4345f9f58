// What this file protects (issue 26, section 5): no webhook event stays `pending` forever. An
// event whose job pg-boss failed on its own (its runs cut off past the retry limit: no onFailed
// ran) ends `failed` with the reason, and can be replayed like any failed event: its one job runs
// again. An event whose job is gone is processed once by the next worker's sweep. The job's
// failure is set in pgboss.job as pg-boss leaves it (the real thing, with killed workers:
// test/conversations/send-sweep.test.ts and worker-killed.test.ts).

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventKey, PROCESS_WEBHOOK_EVENT, replayEvents } from '../../src/domain/webhook-events.ts';
import { startJobs } from '../../src/jobs/index.ts';
import { keyedId } from '../../src/platform/queue/pg-boss.ts';
import type { Queue } from '../../src/platform/queue/queue.ts';
import { call, type Session, signUp } from '../helpers/http.ts';
import { connect } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { deliver, fixture, META_ENV, routeInbox } from './meta.ts';

const PHONE_ID = '106540352242933';
let svc: TestService;
let owner: Session;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  // WORKER=off: nothing runs an event's job until the test starts a worker.
  svc = await startTestService({ ...META_ENV, WORKER_POLL_MS: '500', WORKER_SWEEP_SECONDS: '3600' });
  owner = await signUp(svc, 'Event sweep shop');
  await connect(svc, owner, 'whatsapp', PHONE_ID, 'EAAG-token-for-tests');
});
afterAll(async () => {
  for (const undo of cleanup.reverse()) await undo().catch(() => {});
  await svc?.stop();
});

let seq = 0;
/** A delivered message event, routed: stored pending with its job; its ids. */
async function received() {
  const wamid = `wamid.SWEEP_${process.pid}_${++seq}`;
  const body = fixture('wa-text', {
    PHONE_NUMBER_ID: PHONE_ID,
    WA_ID: '16315551199',
    'wamid.TEXT_ID': wamid,
  });
  expect((await deliver(svc, body)).status).toBe(200);
  await routeInbox(svc);
  const [event] = await svc.services.db.query<{ organization_id: string; id: string }>(
    `select e.organization_id, e.id from app.webhook_events e
       join app.webhook_deliveries d on d.id = e.delivery where d.payload like '%' || $1 || '%'`,
    [wamid],
  );
  const job = { organization_id: event?.organization_id as string, event_id: event?.id as string };
  return { ...job, jobId: keyedId(PROCESS_WEBHOOK_EVENT, eventKey(job)), wamid };
}

const eventRow = async (id: string) =>
  (
    await svc.services.db.query<{ status: string; last_error: string | null }>(
      'select status, last_error from app.webhook_events where id = $1',
      [id],
    )
  )[0];
const jobState = async (id: string) =>
  (
    await svc.services.db.query<{ state: string }>(
      'select state from pgboss.job where name = $1 and id = $2',
      [PROCESS_WEBHOOK_EVENT, id],
    )
  )[0]?.state;

async function worker(): Promise<Queue> {
  const queue = await startJobs({ ...svc.services, log: pino({ level: 'silent' }) }, { work: true });
  cleanup.push(() => queue.stop({ timeoutMs: 500 }));
  return queue;
}

async function until(check: () => Promise<boolean>) {
  while (!(await check())) await new Promise((r) => setTimeout(r, 100));
}

describe('an event whose job pg-boss failed', () => {
  it('ends failed with the reason, and a replay runs its job again: processed once', async () => {
    const e = await received();
    expect(await jobState(e.jobId)).toBe('created');
    await svc.services.db.query(
      `update pgboss.job set state = 'failed', completed_on = now(), output = '{"value":{"message":"job timed out"}}'
        where name = $1 and id = $2`,
      [PROCESS_WEBHOOK_EVENT, e.jobId],
    );
    expect((await svc.services.queue.sweep())[PROCESS_WEBHOOK_EVENT]).toEqual({ requeued: 0, failed: 1 });
    expect(await eventRow(e.event_id)).toEqual({
      status: 'failed',
      last_error: 'its runs were cut off and the queue gave up on its job: job timed out',
    });
    // The owner sees it among the failed events, and replays it.
    const listed = await call(svc, 'GET', '/functions/v1/webhook-events?status=failed', {
      token: owner.access_token,
    });
    expect(listed.json.data.map((x: { id: string }) => x.id)).toContain(e.event_id);
    expect(await replayEvents(svc.services.db, svc.services.queue, { id: e.event_id })).toEqual([e.event_id]);
    expect(await jobState(e.jobId)).toBe('created');
    const running = await worker();
    await until(async () => (await eventRow(e.event_id))?.status === 'processed');
    const [n] = await svc.services.db.query<{ n: number }>(
      'select count(*)::int as n from messages where provider_message_id = $1',
      [e.wamid],
    );
    expect(n?.n).toBe(1);
    // Left running, it would take the next test's event before that test removes its job.
    await running.stop({ timeoutMs: 500 });
  });
});

describe('an event whose job is gone', () => {
  it('is processed once by the next worker, which enqueues it again when it sweeps', async () => {
    const e = await received();
    await svc.services.db.query('delete from pgboss.job where name = $1 and id = $2', [
      PROCESS_WEBHOOK_EVENT,
      e.jobId,
    ]);
    await worker();
    await until(async () => (await eventRow(e.event_id))?.status === 'processed');
    // The queue records the job done just after the run marked the event (under load, later).
    await until(async () => (await jobState(e.jobId)) !== 'active');
    expect(await jobState(e.jobId)).toBe('completed');
    const [n] = await svc.services.db.query<{ n: number }>(
      'select count(*)::int as n from messages where provider_message_id = $1',
      [e.wamid],
    );
    expect(n?.n).toBe(1);
  });
});

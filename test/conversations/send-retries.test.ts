// Durable sends: what a transient failure becomes once the worker has it. A provider 500 then
// success is one message, sent, after exactly two requests; a provider that never answers ends as
// `failed` with the last error and the reason the queue gave up; a message whose first attempt
// never happened (the process died between commit and call) is sent exactly once by a worker
// started later. The retry figures are shortened by configuration; outcomes are polled, not timed.

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { queueMessage } from '../../src/domain/send-message.ts';
import { startJobs } from '../../src/jobs/index.ts';
import type { Principal } from '../../src/platform/db/database.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { call, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { connect, eventually, messageState } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const PHONE_ID = `4${process.pid}05`;
const WA_TOKEN = 'EAAG-wa-token-for-retry-tests';
let seq = 0;
const phone = () => `+1628${String(5550000 + (++seq % 10000)).padStart(7, '0')}`;
const template = { name: 'welcome', language: 'en' };

/**
 * Short retries: first retry after 3 s, then 1 s doubling, 3 runs, a 2 s Graph deadline (ample for
 * the fake, so only the hanging fake times out; a call that timed out while Meta took it is the one
 * double send no one can prevent, and would make "exactly two requests" flaky).
 */
const env = (graph: FakeGraph): Record<string, string> => ({
  META_GRAPH_URL: graph.url,
  META_INSTAGRAM_GRAPH_URL: graph.url,
  META_GRAPH_TIMEOUT_MS: '2000',
  SEND_FIRST_RETRY_SECONDS: '3',
  SEND_RETRY_BACKOFF_SECONDS: '1',
  SEND_RETRY_ATTEMPTS: '3',
  SEND_RETRY_MAX_AGE_SECONDS: '120',
  WORKER_POLL_MS: '500',
  WORKER_SUPERVISE_SECONDS: '1',
});

let graph: FakeGraph;
const services: TestService[] = [];
const stops: (() => Promise<unknown>)[] = [];
const bodies: string[] = [];

async function setUp(extra: Record<string, string>) {
  const svc = await startTestService({ ...env(graph), ...extra });
  services.push(svc);
  const owner = await signUp(svc, 'Retries');
  await setPlan(svc, owner, 'starter');
  bodies.push(JSON.stringify(await connect(svc, owner, 'whatsapp', PHONE_ID, WA_TOKEN)));
  return { svc, owner };
}

const send = async (svc: TestService, owner: Session, body: unknown) => {
  const r = await call(svc, 'POST', '/functions/v1/whatsapp-send-message', {
    token: owner.access_token,
    body,
  });
  bodies.push(JSON.stringify(r.json));
  return r;
};

beforeAll(async () => {
  graph = await startFakeGraph({ accounts: { [PHONE_ID]: { token: WA_TOKEN, channel: 'whatsapp' } } });
});
afterAll(async () => {
  for (const s of stops.reverse()) await s();
  for (const svc of services) await svc.stop();
  await graph?.close();
});

describe('the worker retries (WORKER=inline)', () => {
  let svc: TestService;
  let owner: Session;
  beforeAll(async () => {
    ({ svc, owner } = await setUp({}));
  });

  it('a provider 500 then success: 202, then one message sent after exactly two requests', async () => {
    graph.reset();
    graph.failNext(1, 'server');
    const to = phone();
    const r = await send(svc, owner, { to, template });
    expect(r.status).toBe(202);
    expect(r.json.message.status).toBe('queued');
    const id = r.json.message.id as string;
    const done = await eventually(async () => {
      const m = await messageState(svc, id);
      return m?.status === 'sent' ? m : null;
    });
    expect(done.provider_message_id).toMatch(/^wamid\./);
    expect(done.error).toBeNull();
    const mine = graph.requests.filter((q) => (q.body as { to?: string }).to === to.slice(1));
    expect(mine).toHaveLength(2);
    expect(mine[0]?.response?.status).toBe(500);
    expect(mine[1]?.response?.status).toBe(200);
    const [n] = await svc.services.db.query<{ n: number }>(
      "select count(*)::int as n from messages where conversation_id = $1 and direction = 'out'",
      [r.json.message.conversation_id],
    );
    expect(n?.n).toBe(1);
    // Seen through the API as a person would: the conversation's messages.
    const list = await call(
      svc,
      'GET',
      `/functions/v1/conversations/${r.json.message.conversation_id}/messages`,
      {
        token: owner.access_token,
      },
    );
    bodies.push(JSON.stringify(list.json));
    expect(list.status).toBe(200);
    expect(list.json.data.filter((m: { direction: string }) => m.direction === 'out')).toMatchObject([
      { id, status: 'sent' },
    ]);
  });

  it('a provider that never answers: timeouts, retries, then failed with the last error and why it gave up', async () => {
    graph.reset();
    graph.failNext(20, 'hang');
    const to = phone();
    const r = await send(svc, owner, { to, template });
    expect(r.status).toBe(202);
    const id = r.json.message.id as string;
    const failed = await eventually(async () => {
      const m = await messageState(svc, id);
      return m?.status === 'failed' ? m : null;
    }, 120_000);
    expect(failed.error).toMatchObject({ type: 'timeout', gave_up: 'attempts' });
    expect(String(failed.error?.message)).toMatch(/no answer from the Graph API within 2000 ms/);
    expect(failed.provider_message_id).toBeNull();
    // The request's own attempt and the worker's three runs, none answered.
    const mine = graph.requests.filter((q) => (q.body as { to?: string }).to === to.slice(1));
    expect(mine).toHaveLength(4);
    expect(mine.every((q) => q.response === null)).toBe(true);
    graph.reset();
  });
});

describe('the process dies between commit and call', () => {
  it('a message committed with its job but never attempted is sent exactly once by a worker started later', async () => {
    const { svc, owner } = await setUp({ WORKER: 'off' });
    graph.reset();
    const principal: Principal = {
      kind: 'user',
      userId: owner.user.id,
      claims: await svc.services.tokens.verify(owner.access_token),
    };
    // queueMessage is the send up to its commit: the message row and its job, and no call.
    const to = phone();
    const queued = await queueMessage(svc.services, principal, { channel: 'whatsapp', to, template });
    expect(queued.message.status).toBe('queued');
    await new Promise((r) => setTimeout(r, 1500)); // past the job's delayed start
    expect(graph.requests).toHaveLength(0); // WORKER=off: nobody sends it
    // The restarted worker: `svc worker` over the same database (in process, as in
    // test/platform/queue-lifecycle.test.ts).
    const worker = await startJobs(
      {
        config: loadConfig({ ...env(graph), DATA_DIR: svc.dataDir }),
        db: svc.services.db,
        log: pino({ level: 'silent' }),
        now: () => new Date(),
        secrets: svc.services.secrets,
      },
      { work: true },
    );
    stops.push(() => worker.stop());
    const sent = await eventually(async () => {
      const m = await messageState(svc, queued.message.id);
      return m?.status === 'sent' ? m : null;
    });
    expect(sent.provider_message_id).toMatch(/^wamid\./);
    await new Promise((r) => setTimeout(r, 1500)); // a second send would show by now
    expect(graph.requests.map((q) => (q.body as { to?: string }).to)).toEqual([to.slice(1)]);
  });
});

describe('secrets', () => {
  it('the access token is in no answer and no log line of this file', () => {
    for (const svc of services) expect(svc.logs()).not.toContain(WA_TOKEN);
    for (const b of bodies) expect(b).not.toContain(WA_TOKEN);
  });
});

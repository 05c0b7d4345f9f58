// Sends racing each other: twenty sends for the last five slots of the month (exactly five go
// out), five calls with one Idempotency-Key (one message, one request), and two workers on one
// PostgreSQL draining thirty queued messages (each sent exactly once). PGlite has one connection,
// so its transactions never overlap: the races are real only on PostgreSQL, and the names say so.

import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { queueMessage } from '../../src/domain/send-message.ts';
import { startJobs } from '../../src/jobs/index.ts';
import type { Principal } from '../../src/platform/db/database.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { onPostgres } from '../helpers/db.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { connect, eventually, inbound } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const PHONE_ID = `5${process.pid}06`;
const WA_TOKEN = 'EAAG-wa-token-for-race-tests';
let seq = 0;
const phone = () => `+1332${String(5550000 + (++seq % 10000)).padStart(7, '0')}`;
const template = { name: 'welcome', language: 'en' };
const ENV = {
  // Generous: a first attempt that times out under load would answer 202 instead of 201.
  META_GRAPH_TIMEOUT_MS: '5000',
  SEND_FIRST_RETRY_SECONDS: '6',
  SEND_RETRY_BACKOFF_SECONDS: '1',
  WORKER_POLL_MS: '500',
  WORKER_SUPERVISE_SECONDS: '1',
};

let graph: FakeGraph;
let svc: TestService;
let owner: Session;
let whatsapp: string;
const stops: (() => Promise<unknown>)[] = [];
const bodies: string[] = [];

const send = async (body: unknown, headers?: Record<string, string>) => {
  const r = await call(svc, 'POST', '/functions/v1/whatsapp-send-message', {
    token: owner.access_token,
    body,
    headers,
  });
  bodies.push(JSON.stringify(r.json));
  return r;
};
const toOf = (q: { body: unknown }) => (q.body as { to?: string }).to;

beforeAll(async () => {
  graph = await startFakeGraph({ accounts: { [PHONE_ID]: { token: WA_TOKEN, channel: 'whatsapp' } } });
  // WORKER=off: the requests send at once, and the workers of the last test are started by it.
  svc = await startTestService({
    ...ENV,
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    WORKER: 'off',
  });
  owner = await signUp(svc, 'Races');
  await setPlan(svc, owner, 'starter');
  const account = await connect(svc, owner, 'whatsapp', PHONE_ID, WA_TOKEN);
  bodies.push(JSON.stringify(account));
  whatsapp = account.id;
});
afterAll(async () => {
  for (const s of stops.reverse()) await s();
  await svc?.stop();
  await graph?.close();
});

describe('the monthly ceiling', () => {
  it(`20 concurrent sends for the last 5 of starter’s 1,000 slots: exactly 5 go out, 15 get 403 plan_limit_exceeded${onPostgres() ? '' : ' (a real race only on PostgreSQL; PGlite serializes)'}`, async () => {
    const { conversationId } = await inbound(svc, 'whatsapp', orgOf(owner), whatsapp, phone().slice(1), 1);
    // 995 of this month's 1,000 used: the counter the ceiling trigger keeps (migrations/0017).
    await svc.services.db.query(
      `insert into app.counters (organization_id, name, value) values ($1, app.month_counter('outbound_messages'), 995)
       on conflict (organization_id, name) do update set value = 995`,
      [orgOf(owner)],
    );
    graph.reset();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send({ conversation_id: conversationId, text: `slot ${i}` })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 403)).toHaveLength(15);
    for (const a of answers.filter((x) => x.status === 403)) {
      expect(a.json.error).toBe('plan_limit_exceeded');
      expect(a.json.details).toMatchObject({ resource: 'outbound_messages', limit: 1000, plan: 'starter' });
    }
    expect(graph.requests).toHaveLength(5);
    const [n] = await svc.services.db.query<{ n: number }>(
      "select count(*)::int as n from messages where conversation_id = $1 and direction = 'out'",
      [conversationId],
    );
    expect(n?.n).toBe(5);
    // One more is refused too, without a request.
    const after = await send({ conversation_id: conversationId, text: 'one more' });
    expect(after.status).toBe(403);
    expect(graph.requests).toHaveLength(5);
    // Give the month back for the tests below.
    await svc.services.db.query(
      "update app.counters set value = 0 where organization_id = $1 and name = app.month_counter('outbound_messages')",
      [orgOf(owner)],
    );
  });
});

describe('idempotency keys', () => {
  it(`5 concurrent sends with one Idempotency-Key: one message, one request, one id in every answer${onPostgres() ? '' : ' (a real race only on PostgreSQL)'}`, async () => {
    const to = phone();
    graph.reset();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => send({ to, template }, { 'Idempotency-Key': `race-${to}` })),
    );
    for (const a of answers) expect([201, 202]).toContain(a.status);
    const ids = new Set(answers.map((a) => a.json.message.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(4);
    expect(graph.requests).toHaveLength(1);
    const [n] = await svc.services.db.query<{ n: number }>(
      'select count(*)::int as n from messages where organization_id = $1 and idempotency_key = $2',
      [orgOf(owner), `race-${to}`],
    );
    expect(n?.n).toBe(1);
  });
});

describe('workers', () => {
  it.skipIf(!onPostgres())(
    'two workers on one PostgreSQL send each of 30 queued messages exactly once (PostgreSQL only: PGlite is one process’s database, so a second worker cannot share it)',
    async () => {
      const principal: Principal = {
        kind: 'user',
        userId: owner.user.id,
        claims: await svc.services.tokens.verify(owner.access_token),
      };
      graph.reset();
      // Committed with their jobs, never attempted: what a crashed API process leaves behind.
      const queued = [];
      for (let i = 0; i < 30; i++)
        queued.push(
          await queueMessage(svc.services, principal, { channel: 'whatsapp', to: phone(), template }),
        );
      const config = loadConfig({
        ...ENV,
        META_GRAPH_URL: graph.url,
        META_INSTAGRAM_GRAPH_URL: graph.url,
        DATA_DIR: svc.dataDir,
      });
      for (let w = 0; w < 2; w++) {
        const db = openPostgres(svc.databaseUrl as string, 5);
        const worker = await startJobs(
          {
            config,
            db,
            log: pino({ level: 'silent' }),
            now: () => new Date(),
            secrets: svc.services.secrets,
          },
          { work: true },
        );
        stops.push(async () => {
          await worker.stop();
          await db.close();
        });
      }
      const ids = queued.map((q) => q.message.id);
      await eventually(async () => {
        const [r] = await svc.services.db.query<{ n: number }>(
          "select count(*)::int as n from messages where id = any($1::uuid[]) and status = 'sent'",
          [ids],
        );
        return r?.n === 30;
      });
      await new Promise((r) => setTimeout(r, 2000)); // a second send would show by now
      expect(graph.requests).toHaveLength(30);
      const perRecipient = new Map<string, number>();
      for (const q of graph.requests)
        perRecipient.set(toOf(q) ?? '', (perRecipient.get(toOf(q) ?? '') ?? 0) + 1);
      expect(perRecipient.size).toBe(30);
      expect([...perRecipient.values()].every((n) => n === 1)).toBe(true);
    },
  );
});

describe('secrets', () => {
  it('the access token is in no answer and no log line of this file', () => {
    expect(svc.logs()).not.toContain(WA_TOKEN);
    for (const b of bodies) expect(b).not.toContain(WA_TOKEN);
  });
});

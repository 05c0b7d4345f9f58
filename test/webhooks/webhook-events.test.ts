// GET/POST /functions/v1/webhook-events over real HTTP: owners and admins list their
// organization's events newest first in the list envelope (never the payload; filter by status),
// members and agents are refused; only owners replay, only failed or rejected events, only their
// own; a rejected event replayed after an upgrade is imported by the worker.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { countOf, deliver, fixture, META_ENV, processPending } from './meta.ts';

let svc: TestService;
let owner: Session;
let other: Session;
let adminToken: string;
let memberToken: string;
let agent: string;
const URL_ = '/functions/v1/webhook-events';
const PHONE_A = '108111111111111';
const PHONE_B = '108222222222222';
const TOKEN = 'EAAG-wa-token-for-tests';
const answers: string[] = [];

async function connect(s: Session, externalId: string) {
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: s.access_token,
    body: { provider: 'whatsapp', external_id: externalId, access_token: TOKEN },
  });
  expect(r.status).toBe(201);
  return r.json.id as string;
}

async function fn(method: string, token: string, opts: { body?: unknown; query?: string } = {}) {
  const r = await call(svc, method, `${URL_}${opts.query ?? ''}`, { token, body: opts.body });
  answers.push(JSON.stringify(r.json));
  return r;
}

const text = (phone: string, id: string, from = '14155550100') =>
  fixture('wa-text', { PHONE_NUMBER_ID: phone, WA_ID: from, TEXT_ID: id });

beforeAll(async () => {
  svc = await startTestService({ ...META_ENV });
  owner = await signUp(svc, 'Events A');
  other = await signUp(svc, 'Events B');
  adminToken = await inviteAndAccept(svc, owner, await signUp(svc), 'admin');
  memberToken = await inviteAndAccept(svc, owner, await signUp(svc), 'member');
  await setPlan(svc, owner, 'growth');
  agent = (await agentToken(svc, owner, ['admin'])).token;
  await connect(owner, PHONE_A);
  await connect(other, PHONE_B);
  // Free plan for B, at its contacts ceiling: B's event is rejected.
  await svc.services.db.query(
    `insert into contacts (organization_id, email) select $1, 'c' || g || '@example.test' from generate_series(1, 50) g`,
    [orgOf(other)],
  );
  for (const id of ['ONE', 'TWO', 'THREE']) expect((await deliver(svc, text(PHONE_A, id))).status).toBe(200);
  expect((await deliver(svc, text(PHONE_B, 'B_CEILING', '14155550199'))).status).toBe(200);
  await processPending(svc);
  // A's second event failed (as a domain refusal would leave it).
  await svc.services.db.query(
    `update app.webhook_events set status = 'failed', last_error = 'boom' where id =
       (select id from app.webhook_events where organization_id = $1 order by received_at, id offset 1 limit 1)`,
    [orgOf(owner)],
  );
});
afterAll(() => svc?.stop());

describe('listing', () => {
  it('owners and admins see their events newest first, in the list envelope, without the payload', async () => {
    for (const token of [owner.access_token, adminToken]) {
      const r = await fn('GET', token);
      expect(r.status).toBe(200);
      expect(r.json.pagination).toEqual({ page: 1, per_page: 25, total: 3, total_pages: 1 });
      expect(r.json.data).toHaveLength(3);
      const e = r.json.data[0];
      expect(Object.keys(e).sort()).toEqual(
        [
          'account_id',
          'attempts',
          'id',
          'last_error',
          'processed_at',
          'provider',
          'received_at',
          'status',
          'topic',
        ].sort(),
      );
      expect(e).toMatchObject({ provider: 'meta', topic: 'whatsapp_business_account' });
      const times = r.json.data.map((x: { received_at: string }) => x.received_at);
      expect([...times].sort().reverse()).toEqual(times);
    }
  });

  it('filters by status and pages (per_page at most 100)', async () => {
    const failed = await fn('GET', owner.access_token, { query: '?status=failed' });
    expect(failed.status).toBe(200);
    expect(failed.json.data).toHaveLength(1);
    expect(failed.json.data[0]).toMatchObject({ status: 'failed', last_error: 'boom' });
    const processed = await fn('GET', owner.access_token, { query: '?status=processed&per_page=1&page=2' });
    expect(processed.json.data).toHaveLength(1);
    expect(processed.json.pagination).toEqual({ page: 2, per_page: 1, total: 2, total_pages: 2 });
    expect((await fn('GET', owner.access_token, { query: '?per_page=101' })).status).toBe(400);
    expect((await fn('GET', owner.access_token, { query: '?status=nope' })).status).toBe(400);
  });

  it('members and agents are refused; another tenant sees only its own', async () => {
    expect((await fn('GET', memberToken)).status).toBe(403);
    expect((await fn('GET', agent)).status).toBe(403);
    const b = await fn('GET', other.access_token);
    expect(b.json.data).toHaveLength(1);
    expect(b.json.data[0]).toMatchObject({ status: 'rejected' });
    expect(b.json.data[0].last_error).toMatch(/Free plan allows 50 contacts/);
  });

  it('no answer carries a payload', () => {
    for (const a of answers) {
      expect(a).not.toContain('another color');
      expect(a).not.toContain('payload');
    }
  });
});

describe('replay', () => {
  const eventOf = async (session: Session, status: string) => {
    const r = await fn('GET', session.access_token, { query: `?status=${status}` });
    return r.json.data[0].id as string;
  };

  it('only owners; admins 403; another tenant’s id 404; a processed event 409 with its status', async () => {
    const failed = await eventOf(owner, 'failed');
    const processed = await eventOf(owner, 'processed');
    const body = (id: string) => ({ body: { id, action: 'replay' } });
    expect((await fn('POST', adminToken, body(failed))).status).toBe(403);
    expect((await fn('POST', memberToken, body(failed))).status).toBe(403);
    expect((await fn('POST', other.access_token, body(failed))).status).toBe(404);
    const conflict = await fn('POST', owner.access_token, body(processed));
    expect(conflict.status).toBe(409);
    expect(conflict.json).toMatchObject({ error: 'not_replayable', details: { status: 'processed' } });
    expect((await fn('POST', owner.access_token, { body: { id: failed, action: 'other' } })).status).toBe(
      400,
    );

    const r = await fn('POST', owner.access_token, body(failed));
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: failed, status: 'pending', last_error: null });
    // Pending now: a second replay is 409.
    expect((await fn('POST', owner.access_token, body(failed))).status).toBe(409);
    await processPending(svc);
    const [e] = await svc.services.db.query<{ status: string }>(
      'select status from app.webhook_events where id = $1',
      [failed],
    );
    expect(e?.status).toBe('processed');
  });

  it('a rejected event replayed after an upgrade is imported', async () => {
    const rejected = await eventOf(other, 'rejected');
    const org = orgOf(other);
    expect(await countOf(svc, 'messages where organization_id = $1', [org])).toBe(0);
    await setPlan(svc, other, 'starter');
    const r = await fn('POST', other.access_token, { body: { id: rejected, action: 'replay' } });
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('pending');
    // The event's one job (keyed by the event) is there to run: here the first one never ran, since
    // the tests process events themselves (WORKER=off); a finished one would have been replaced.
    const jobs = await svc.services.db.query<{ state: string }>(
      `select state from pgboss.job where name = 'process-webhook-event' and data->>'event_id' = $1`,
      [rejected],
    );
    expect(jobs).toEqual([{ state: 'created' }]);
    await processPending(svc);
    expect(
      await countOf(svc, "messages where organization_id = $1 and provider_message_id = 'wamid.B_CEILING'", [
        org,
      ]),
    ).toBe(1);
    const listed = await fn('GET', other.access_token);
    expect(listed.json.data[0]).toMatchObject({ id: rejected, status: 'processed', attempts: 2 });
  });
});

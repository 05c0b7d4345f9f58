// POST /functions/v1/internal-webhook over real HTTP: the bearer token first (missing, wrong,
// unset → 404), then the body and the account (another organization's account or an unknown
// organization → 400, never told to a caller without the token); a message.inbound event goes
// through the inbox and the worker into the conversations, opening the WhatsApp window; the same
// id twice is stored once; 500 requests a minute per address, shared with Meta's receiver.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { countOf, deliver, META_ENV, processPending } from './meta.ts';

const TOKEN = 'internal-webhook-token-for-tests';
let svc: TestService;
let owner: Session;
let other: Session;
let account: string;
let otherAccount: string;

async function connect(s: Session, externalId: string) {
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: s.access_token,
    body: { provider: 'whatsapp', external_id: externalId, access_token: 'EAAG-token' },
  });
  expect(r.status).toBe(201);
  return r.json.id as string;
}

async function post(target: TestService, body: unknown, token: string | null = TOKEN) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${target.url}/functions/v1/internal-webhook`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const inbound = (org: string, acc: string, extra: Record<string, unknown> = {}, id?: string) => ({
  organization_id: org,
  type: 'message.inbound',
  ...(id === undefined ? {} : { id }),
  data: {
    channel: 'whatsapp',
    account_id: acc,
    from: '14155550123',
    name: 'Ada Bridge',
    text: 'Hello from the bridge',
    ...extra,
  },
});

beforeAll(async () => {
  svc = await startTestService({ ...META_ENV, INTERNAL_WEBHOOK_TOKEN: TOKEN });
  owner = await signUp(svc, 'Internal A');
  other = await signUp(svc, 'Internal B');
  // Sending needs a plan with messaging.
  await setPlan(svc, owner, 'starter');
  account = await connect(owner, '109111111111111');
  otherAccount = await connect(other, '109222222222222');
});
afterAll(() => svc?.stop());

describe('the token', () => {
  it('missing or wrong → 401 before the body or the organization is looked at', async () => {
    const body = inbound(orgOf(owner), account);
    expect((await post(svc, body, null)).status).toBe(401);
    expect((await post(svc, body, 'wrong')).status).toBe(401);
    expect((await post(svc, body, `${TOKEN}x`)).status).toBe(401);
    // An unknown organization and a malformed body look the same without the token.
    expect((await post(svc, inbound('00000000-0000-4000-8000-000000000000', account), 'wrong')).status).toBe(
      401,
    );
    expect((await post(svc, 'not json', 'wrong')).status).toBe(401);
    expect(await countOf(svc, "app.webhook_events where provider = 'internal'")).toBe(0);
  });

  it('unset → 404 not_found', async () => {
    const bare = await startTestService({ ...META_ENV });
    try {
      const r = await post(bare, inbound(orgOf(owner), account));
      expect(r.status).toBe(404);
      expect(r.json.error).toBe('not_found');
    } finally {
      await bare.stop();
    }
  });
});

describe('the body', () => {
  it('an unknown organization, another organization’s account, a bad type or no JSON → 400, nothing stored', async () => {
    expect((await post(svc, inbound('00000000-0000-4000-8000-000000000000', account))).status).toBe(400);
    expect((await post(svc, inbound(orgOf(owner), otherAccount))).status).toBe(400);
    expect((await post(svc, inbound(orgOf(owner), account, { channel: 'messenger' }))).status).toBe(400);
    expect((await post(svc, { ...inbound(orgOf(owner), account), type: 'nope' })).status).toBe(400);
    expect((await post(svc, 'not json')).status).toBe(400);
    expect(await countOf(svc, "app.webhook_events where provider = 'internal'")).toBe(0);
  });
});

describe('message.inbound', () => {
  it('becomes an inbound message in the conversations, opening the WhatsApp window; the same id twice is stored once', async () => {
    const body = inbound(orgOf(owner), account, {}, 'bridge-1');
    expect((await post(svc, body)).status).toBe(200);
    expect((await post(svc, body)).status).toBe(200);
    expect(await countOf(svc, "app.webhook_events where provider = 'internal'")).toBe(1);
    expect(await processPending(svc)).toEqual([{ status: 'done' }]);

    const r = await call(svc, 'GET', '/functions/v1/conversations', { token: owner.access_token });
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveLength(1);
    expect(r.json.data[0]).toMatchObject({
      channel: 'whatsapp',
      unread_count: 1,
      contact: { name: 'Ada Bridge' },
      last_message: { direction: 'in', type: 'text' },
    });
    expect(r.json.data[0].last_inbound_at).toEqual(expect.any(String));
    const events = await call(svc, 'GET', '/functions/v1/webhook-events', { token: owner.access_token });
    expect(events.json.data[0]).toMatchObject({
      provider: 'internal',
      topic: 'message.inbound',
      status: 'processed',
    });
    // The window is open: free-form text goes out (to the test's open fake Graph).
    const contactId = r.json.data[0].contact.id;
    const sent = await call(svc, 'POST', '/functions/v1/whatsapp-send-message', {
      token: owner.access_token,
      body: { contact_id: contactId, text: 'Hi Ada' },
    });
    expect(sent.json).toMatchObject({ message: { status: 'sent' } });
    // 201: sent at once; outside the window it would be 409.
    expect(sent.status).toBe(201);
    // Nothing landed in the other organization.
    expect(await countOf(svc, 'messages where organization_id = $1', [orgOf(other)])).toBe(0);
  });

  it('without an id, the body’s digest dedupes it', async () => {
    const body = JSON.stringify(
      inbound(orgOf(owner), account, { provider_message_id: 'bridge-msg-2', timestamp: 1750090702 }),
    );
    expect((await post(svc, body)).status).toBe(200);
    expect((await post(svc, body)).status).toBe(200);
    expect(await countOf(svc, "app.webhook_events where provider = 'internal'")).toBe(2);
    await processPending(svc);
    const [m] = await svc.services.db.query<{ received_at: Date; body: string }>(
      "select received_at, body from messages where provider_message_id = 'bridge-msg-2'",
    );
    expect(m).toEqual({ received_at: new Date(1750090702 * 1000), body: 'Hello from the bridge' });
  });
});

describe('order.status', () => {
  const order = async (org: string) => {
    const [o] = await svc.services.db.query<{ id: string; order_number: string }>(
      'insert into orders (organization_id) values ($1) returning id, order_number',
      [org],
    );
    return o as { id: string; order_number: string };
  };
  const statusEvents = (id: string) =>
    svc.services.db.query<{ from_status: string | null; to_status: string; note: string | null }>(
      'select from_status, to_status, note from order_status_events where order_id = $1 order by created_at, id',
      [id],
    );
  const statusOf = async (id: string) =>
    (await svc.services.db.query<{ status: string }>('select status from orders where id = $1', [id]))[0]
      ?.status;
  const event = (org: string, data: Record<string, unknown>, id?: string) => ({
    organization_id: org,
    type: 'order.status',
    ...(id === undefined ? {} : { id }),
    data,
  });

  it('moves the order through its lifecycle by id or number, with the note', async () => {
    const o = await order(orgOf(owner));
    expect(
      (await post(svc, event(orgOf(owner), { order_id: o.id, status: 'confirmed', note: 'paid' }, 'os-1')))
        .status,
    ).toBe(200);
    await processPending(svc);
    expect(await statusOf(o.id)).toBe('confirmed');
    expect(
      (await post(svc, event(orgOf(owner), { order_number: o.order_number, status: 'processing' }, 'os-2')))
        .status,
    ).toBe(200);
    await processPending(svc);
    expect(await statusOf(o.id)).toBe('processing');
    expect((await statusEvents(o.id)).slice(1)).toEqual([
      { from_status: 'pending', to_status: 'confirmed', note: 'paid' },
      { from_status: 'confirmed', to_status: 'processing', note: 'internal event' },
    ]);
    const [e] = await svc.services.db.query<{ status: string; account_id: string | null }>(
      "select status, account_id from app.webhook_events where delivery_id like '%:os-2'",
    );
    expect(e).toEqual({ status: 'processed', account_id: null });
  });

  it('a move the lifecycle cannot make is recorded as a note, never an error; the order stays', async () => {
    const o = await order(orgOf(owner));
    expect(
      (await post(svc, event(orgOf(owner), { order_id: o.id, status: 'delivered' }, 'os-3'))).status,
    ).toBe(200);
    expect(await processPending(svc)).toEqual([{ status: 'done' }]);
    expect(await statusOf(o.id)).toBe('pending');
    const events = await statusEvents(o.id);
    expect(events.at(-1)).toMatchObject({ from_status: 'pending', to_status: 'pending' });
    expect(events.at(-1)?.note).toMatch(/delivered.*cannot reach from pending/);
    const [e] = await svc.services.db.query<{ status: string }>(
      "select status from app.webhook_events where delivery_id like '%:os-3'",
    );
    expect(e?.status).toBe('processed');
  });

  it('another organization’s order is not found (the event fails); an unknown organization is 400; the same id is stored once', async () => {
    const o = await order(orgOf(other));
    const body = event(orgOf(owner), { order_id: o.id, status: 'confirmed' }, 'os-4');
    expect((await post(svc, body)).status).toBe(200);
    expect((await post(svc, body)).status).toBe(200);
    expect(await countOf(svc, "app.webhook_events where delivery_id like '%:os-4'")).toBe(1);
    await processPending(svc);
    expect(await statusOf(o.id)).toBe('pending');
    const [e] = await svc.services.db.query<{ status: string; last_error: string }>(
      "select status, last_error from app.webhook_events where delivery_id like '%:os-4'",
    );
    expect(e).toMatchObject({ status: 'failed', last_error: 'No such order' });
    const unknown = event('00000000-0000-4000-8000-000000000000', { order_id: o.id, status: 'confirmed' });
    expect((await post(svc, unknown)).status).toBe(400);
    expect((await post(svc, unknown, 'wrong')).status).toBe(401);
    expect((await post(svc, event(orgOf(owner), { status: 'confirmed' }))).status).toBe(400);
    expect((await post(svc, event(orgOf(owner), { order_id: o.id, status: 'lost' }))).status).toBe(400);
  });
});

describe('rate limit', () => {
  it('500 requests a minute per address, shared with Meta’s receiver: the 501st is 429 with Retry-After, even with the token', async () => {
    // A service of its own, so this test's address starts with the whole budget.
    const limited = await startTestService({ ...META_ENV, INTERNAL_WEBHOOK_TOKEN: TOKEN });
    try {
      expect(limited.services.config.rateLimits.webhookPerMinute).toBe(500);
      const statuses: number[] = [];
      for (let i = 0; i < 250; i++) statuses.push((await post(limited, {}, 'wrong')).status);
      for (let i = 0; i < 250; i++) statuses.push((await deliver(limited, '{}', { signature: null })).status);
      expect(statuses.filter((s) => s !== 401)).toEqual([]);
      const refused = await fetch(`${limited.url}/functions/v1/internal-webhook`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(inbound(orgOf(owner), account, {}, 'over-the-limit')),
      });
      expect(refused.status).toBe(429);
      expect((await refused.json()).error).toBe('rate_limit_exceeded');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await countOf(limited, "app.webhook_events where provider = 'internal'")).toBe(0);
    } finally {
      await limited.stop();
    }
  });
});

// Sending: the three *-send-message functions against the fake Graph API over real HTTP — the
// request Meta receives, the message row, the windows, the free plan, idempotency keys, provider
// refusals, and another tenant's ids.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver, deliverDeps } from '../../src/domain/deliver-message.ts';
import { queueMessage } from '../../src/domain/send-message.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, setPlan } from '../helpers/mcp.ts';
import { connect, inbound as inboundOn } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { humanPrincipal } from '../rls/fixtures.ts';

const principalOf = (s: Session) => humanPrincipal(s.user.id, orgOf(s), 'owner');

let graph: FakeGraph;
let svc: TestService;
let owner: Session;
let stranger: Session;
let seq = 0;
const PHONE_ID = `1${process.pid}01`;
const PAGE_ID = `2${process.pid}02`;
const WA_TOKEN = 'EAAG-wa-token-for-tests';
const PAGE_TOKEN = 'EAAG-page-token-for-tests';

const phone = () => `+1415${String(5550000 + (++seq % 10000)).padStart(7, '0')}`;
const send = (
  fn: string,
  s: { access_token: string } | string,
  body: unknown,
  headers?: Record<string, string>,
) =>
  call(svc, 'POST', `/functions/v1/${fn}`, {
    token: typeof s === 'string' ? s : s.access_token,
    body,
    headers,
  });

/** A WhatsApp customer `waId` who wrote `hoursAgo` hours ago (test/helpers/send.ts). */
const inbound = (org: string, account: string, waId: string, hoursAgo: number) =>
  inboundOn(svc, 'whatsapp', org, account, waId, hoursAgo);

let whatsapp: string;
beforeAll(async () => {
  graph = await startFakeGraph({
    accounts: {
      [PHONE_ID]: { token: WA_TOKEN, channel: 'whatsapp' },
      [PAGE_ID]: { token: PAGE_TOKEN, channel: 'messenger' },
    },
  });
  svc = await startTestService({
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    META_GRAPH_TIMEOUT_MS: '2000',
  });
  owner = await signUp(svc, 'Sender');
  stranger = await signUp(svc, 'Stranger');
  await setPlan(svc, owner, 'starter');
  whatsapp = (await connect(svc, owner, 'whatsapp', PHONE_ID, WA_TOKEN)).id;
});
afterAll(async () => {
  await svc?.stop();
  await graph?.close();
});

describe('WhatsApp sends', () => {
  it('sends text inside the 24-hour window: Meta gets the documented body, the message is sent with its wamid', async () => {
    const to = phone().slice(1);
    const { contactId, conversationId } = await inbound(orgOf(owner), whatsapp, to, 2);
    graph.reset();
    const r = await send('whatsapp-send-message', owner, {
      contact_id: contactId,
      text: 'Your order shipped',
    });
    expect(r.status).toBe(201);
    expect(r.json.message).toMatchObject({
      conversation_id: conversationId,
      direction: 'out',
      type: 'text',
      body: 'Your order shipped',
      status: 'sent',
      sent_by_user_id: owner.user.id,
    });
    expect(r.json.message.provider_message_id).toMatch(/^wamid\./);
    const [req] = graph.requests;
    expect(req?.path).toBe(`/${svc.services.config.graph.version}/${PHONE_ID}/messages`);
    expect(req?.headers.authorization).toBe(`Bearer ${WA_TOKEN}`);
    expect(req?.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to,
      type: 'text',
      text: { body: 'Your order shipped', preview_url: false },
    });
  });

  it('refuses text outside the window before calling Meta, and sends a template instead', async () => {
    const to = phone().slice(1);
    const { contactId } = await inbound(orgOf(owner), whatsapp, to, 30);
    graph.reset();
    const refused = await send('whatsapp-send-message', owner, {
      contact_id: contactId,
      text: 'Hello again',
    });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toBe('outside_messaging_window');
    expect(refused.json.details.allowed).toEqual(['template']);
    expect(graph.requests).toHaveLength(0);
    const [count] = await svc.services.db.query<{ n: number }>(
      "select count(*)::int as n from messages where organization_id = $1 and body = 'Hello again'",
      [orgOf(owner)],
    );
    expect(count?.n).toBe(0);
    const template = { name: 'order_update', language: 'en_US' };
    const ok = await send('whatsapp-send-message', owner, { contact_id: contactId, template });
    expect(ok.status).toBe(201);
    expect(graph.requests[0]?.body).toMatchObject({
      type: 'template',
      template: { name: 'order_update', language: { code: 'en_US' } },
    });
  });

  it('to a new number: creates the contact and conversation, template only', async () => {
    const to = phone();
    const r = await send('whatsapp-send-message', owner, {
      to,
      template: { name: 'welcome', language: 'en' },
    });
    expect(r.status).toBe(201);
    const [contact] = await svc.services.db.query<{ phone: string; source: string }>(
      'select c.phone, c.source from contacts c join conversations v on v.contact_id = c.id where v.id = $1',
      [r.json.message.conversation_id],
    );
    expect(contact).toEqual({ phone: to, source: 'whatsapp' });
  });

  it('an Idempotency-Key answers the first message and sends once', async () => {
    const to = phone();
    graph.reset();
    const body = { to, template: { name: 'receipt', language: 'en' } };
    const headers = { 'Idempotency-Key': `receipt-${to}` };
    const [a, b] = [
      await send('whatsapp-send-message', owner, body, headers),
      await send('whatsapp-send-message', owner, body, headers),
    ];
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.json.message.id).toBe(a.json.message.id);
    expect(graph.requests).toHaveLength(1);
  });

  it('a permanent refusal fails the message with Meta’s code and answers 502 provider_error', async () => {
    graph.failNext(1, 'recipient');
    const r = await send('whatsapp-send-message', owner, {
      to: phone(),
      template: { name: 'welcome', language: 'en' },
    });
    expect(r.status).toBe(502);
    expect(r.json.error).toBe('provider_error');
    expect(typeof r.json.details.provider_code).toBe('number');
    const [m] = await svc.services.db.query<{ status: string; error: { code: number } }>(
      'select status, error from messages where id = $1',
      [r.json.details.message_id],
    );
    expect(m?.status).toBe('failed');
    expect(m?.error.code).toBe(r.json.details.provider_code);
  });

  it('a transient failure answers 202 with the message queued for the worker', async () => {
    graph.failNext(1, 'server');
    const r = await send('whatsapp-send-message', owner, {
      to: phone(),
      template: { name: 'welcome', language: 'en' },
    });
    expect(r.status).toBe(202);
    expect(r.json.message.status).toBe('queued');
  });
});

describe('who may send', () => {
  it('a free organization is refused with plan_limit_exceeded naming the plan that allows messaging', async () => {
    const r = await send('whatsapp-send-message', stranger, { to: phone(), text: 'hi' });
    expect(r.status).toBe(403);
    expect(r.json.error).toBe('plan_limit_exceeded');
    expect(r.json.details).toMatchObject({
      resource: 'outbound_messages',
      plan: 'free',
      minimum_plan: 'starter',
    });
  });

  it('a read agent is refused; a write agent sends and is named as the sender', async () => {
    const reader = await agentToken(svc, owner, ['read']);
    const writer = await agentToken(svc, owner, ['write']);
    const body = { to: phone(), template: { name: 'welcome', language: 'en' } };
    const refused = await send('whatsapp-send-message', reader.token, body);
    expect(refused.status).toBe(403);
    const ok = await send('whatsapp-send-message', writer.token, body);
    expect(ok.status).toBe(201);
    expect(ok.json.message.sent_by_agent_key_id).toEqual(expect.any(String));
    expect(ok.json.message.sent_by_user_id).toBeNull();
  });

  it('another tenant’s contact or conversation looks missing', async () => {
    const { contactId, conversationId } = await inbound(orgOf(owner), whatsapp, phone().slice(1), 1);
    await setPlan(svc, stranger, 'starter');
    for (const target of [{ contact_id: contactId }, { conversation_id: conversationId }]) {
      const r = await send('whatsapp-send-message', stranger, { ...target, text: 'hi' });
      expect(r.status).toBe(404);
    }
  });

  it('without a connected account of the channel: 409 channel_not_connected', async () => {
    const r = await send('facebook-send-message', owner, { to: '123456', text: 'hi' });
    expect(r.status).toBe(409);
    expect(r.json.error).toBe('channel_not_connected');
  });

  it('no secret in any answer or log line', async () => {
    expect(svc.logs()).not.toContain(WA_TOKEN);
  });
});

describe('recipients', () => {
  it('a contact with only a phone number is reached on WhatsApp at that number', async () => {
    const number = phone();
    const made = await call(svc, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      body: { first_name: 'Bea', phone: number },
      headers: { Prefer: 'return=representation' },
    });
    expect(made.status).toBe(201);
    graph.reset();
    const r = await send('whatsapp-send-message', owner, {
      contact_id: made.json[0].id,
      template: { name: 'welcome', language: 'en' },
    });
    expect(r.status).toBe(201);
    expect(graph.requests[0]?.body).toMatchObject({ to: number.slice(1) });
  });
});

describe('usage', () => {
  it('agent-usage counts this month’s outbound messages, failed ones included and inbound ones not', async () => {
    const [count] = await svc.services.db.query<{ n: number }>(
      "select count(*)::int as n from messages where organization_id = $1 and direction = 'out'",
      [orgOf(owner)],
    );
    const agent = await agentToken(svc, owner, ['read']);
    const r = await call(svc, 'GET', '/functions/v1/agent-usage', { token: agent.token });
    expect(r.status).toBe(200);
    expect(r.json.usage.outbound_messages).toMatchObject({ used: count?.n, limit: 1000, period: 'month' });
    expect(count?.n).toBeGreaterThan(5);
  });
});

describe('the ceiling in SQL', () => {
  it('refuses an outbound message of a free organization on every path, the service path included; inbound ones pass', async () => {
    const free = await signUp(svc, 'Free Sender');
    const org = orgOf(free);
    const externalId = `9${process.pid}${++seq}`;
    graph.setAccount(externalId, { token: 'tok', channel: 'whatsapp' });
    const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
      token: free.access_token,
      body: { provider: 'whatsapp', external_id: externalId, access_token: 'tok' },
    });
    expect(r.status).toBe(201);
    const { conversationId } = await inbound(org, r.json.id, phone().slice(1), 1);
    await expect(
      svc.services.db.query(
        `insert into messages (organization_id, conversation_id, account_id, direction, type, body, status)
         values ($1, $2, $3, 'out', 'text', 'hi', 'queued')`,
        [org, conversationId, r.json.id],
      ),
    ).rejects.toMatchObject({ code: 'SV403' });
    const [n] = await svc.services.db.query<{ n: number }>(
      'select count(*)::int as n from messages where conversation_id = $1',
      [conversationId],
    );
    expect(n?.n).toBe(1); // the inbound one
  });
});

describe('what the review found', () => {
  it('a message another attempt has claimed is not sent again until that claim ends', async () => {
    const deps = deliverDeps({ ...svc.services, now: () => new Date() });
    const { message, jobId } = await queueMessage(svc.services, principalOf(owner), {
      channel: 'whatsapp',
      to: phone(),
      template: { name: 'welcome', language: 'en' },
    });
    expect(jobId).toEqual(expect.any(String));
    const job = { organization_id: message.organization_id, message_id: message.id };
    await svc.services.db.query(
      "update messages set sending_until = now() + interval '1 hour' where id = $1",
      [message.id],
    );
    graph.reset();
    expect((await deliver(deps, job)).state).toBe('retry');
    expect(graph.requests).toHaveLength(0);
    await svc.services.db.query(
      "update messages set sending_until = now() - interval '1 second' where id = $1",
      [message.id],
    );
    const sent = await deliver(deps, job);
    expect(sent.state).toBe('sent');
    expect(sent.message.sending_until).toBeNull();
    expect((await deliver(deps, job)).state).toBe('settled');
    expect(graph.requests).toHaveLength(1);
  });

  it('refuses a pasted token with a line break or spaces when connecting, and never echoes it', async () => {
    const token = 'EAAGsecretPART1\nPART2secret';
    const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
      token: owner.access_token,
      body: { provider: 'whatsapp', external_id: `8${process.pid}${++seq}`, access_token: `${token}\n` },
    });
    expect(r.status).toBe(400);
    expect(r.json.details.issues[0].path).toBe('access_token');
    expect(JSON.stringify(r.json)).not.toContain('PART2secret');
  });

  it('refuses captions and text the channel would not carry, before anything is queued', async () => {
    const cases = [
      ['facebook-send-message', { to: '123', media_url: 'https://x.test/a.jpg', caption: 'look' }, 'caption'],
      ['whatsapp-send-message', { to: phone(), text: 'hi', caption: 'x' }, 'caption'],
      ['facebook-send-message', { to: '123', text: 'x'.repeat(2001) }, 'text'],
      ['instagram-send-message', { to: '123', text: 'é'.repeat(501) }, 'text'],
    ] as const;
    for (const [fn, body, path] of cases) {
      const r = await send(fn, owner, body);
      expect(r.status, `${fn} ${path}`).toBe(400);
      expect(r.json.details.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
  });

  it('a contact whose phone is another contact’s WhatsApp id reaches that number’s conversation', async () => {
    const waId = phone().slice(1);
    const { contactId: holder, conversationId } = await inbound(orgOf(owner), whatsapp, waId, 1);
    const made = await call(svc, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      body: { first_name: 'Same Number', phone: `+${waId}` },
      headers: { Prefer: 'return=representation' },
    });
    expect(made.json[0].id).not.toBe(holder);
    const r = await send('whatsapp-send-message', owner, { contact_id: made.json[0].id, text: 'hello' });
    expect(r.status).toBe(201);
    expect(r.json.message.conversation_id).toBe(conversationId);
  });
});

// Messenger and Instagram sends against the fake Graph API over real HTTP: the request Meta
// receives on each channel (path, host, headers, body), the 24-hour window and the human-agent tag
// after it, what agents may not do, and templates (a WhatsApp feature) refused on Messenger.
// Instagram runs on its own fake, so the host it goes to (META_INSTAGRAM_GRAPH_URL) is asserted.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, setPlan } from '../helpers/mcp.ts';
import { inbound } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let graph: FakeGraph;
let instagramGraph: FakeGraph;
let svc: TestService;
let owner: Session;
let seq = 0;
const PAGE_ID = `3${process.pid}03`;
const IG_ID = `178${process.pid}04`;
const PAGE_TOKEN = 'EAAG-page-token-for-channel-tests';
const IG_TOKEN = 'IGAA-instagram-token-for-channel-tests';
const customer = () => `${7000000000000000 + process.pid * 1000 + ++seq}`;

const send = (fn: string, token: string, body: unknown) =>
  call(svc, 'POST', `/functions/v1/${fn}`, { token, body });

let page: string;
let ig: string;
const bodies: string[] = [];
beforeAll(async () => {
  graph = await startFakeGraph({ accounts: { [PAGE_ID]: { token: PAGE_TOKEN, channel: 'messenger' } } });
  instagramGraph = await startFakeGraph({ accounts: { [IG_ID]: { token: IG_TOKEN, channel: 'instagram' } } });
  svc = await startTestService({
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: instagramGraph.url,
    META_GRAPH_TIMEOUT_MS: '2000',
  });
  owner = await signUp(svc, 'Channels');
  await setPlan(svc, owner, 'starter');
  const connect = async (provider: string, external_id: string, access_token: string) => {
    const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
      token: owner.access_token,
      body: { provider, external_id, access_token },
    });
    expect(r.status).toBe(201);
    bodies.push(JSON.stringify(r.json));
    return r.json.id as string;
  };
  page = await connect('facebook', PAGE_ID, PAGE_TOKEN);
  ig = await connect('instagram', IG_ID, IG_TOKEN);
  // Connecting asked each fake about its token (account-proof.ts): the sends start from none.
  graph.reset();
  instagramGraph.reset();
});
afterAll(async () => {
  await svc?.stop();
  await graph?.close();
  await instagramGraph?.close();
});

describe('Messenger (a Facebook Page)', () => {
  it('within 24 h: POST /{version}/{page-id}/messages with recipient.id and messaging_type RESPONSE', async () => {
    const psid = customer();
    const { contactId, conversationId } = await inbound(svc, 'messenger', orgOf(owner), page, psid, 2);
    graph.reset();
    const r = await send('facebook-send-message', owner.access_token, {
      contact_id: contactId,
      text: 'Your table is ready',
    });
    bodies.push(JSON.stringify(r.json));
    expect(r.status).toBe(201);
    expect(r.json.message).toMatchObject({
      conversation_id: conversationId,
      direction: 'out',
      status: 'sent',
      body: 'Your table is ready',
    });
    expect(r.json.message.provider_message_id).toMatch(/^m_/);
    expect(graph.requests).toHaveLength(1);
    const [req] = graph.requests;
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe(`/${svc.services.config.graph.version}/${PAGE_ID}/messages`);
    expect(req?.headers.authorization).toBe(`Bearer ${PAGE_TOKEN}`);
    expect(req?.headers['content-type']).toMatch(/^application\/json/);
    expect(req?.body).toEqual({
      recipient: { id: psid },
      messaging_type: 'RESPONSE',
      message: { text: 'Your table is ready' },
    });
    expect(instagramGraph.requests).toHaveLength(0);
  });

  it('a person’s reply at 30 h goes out as MESSAGE_TAG with the HUMAN_AGENT tag', async () => {
    const psid = customer();
    const { conversationId } = await inbound(svc, 'messenger', orgOf(owner), page, psid, 30);
    graph.reset();
    const r = await send('facebook-send-message', owner.access_token, {
      conversation_id: conversationId,
      text: 'Sorry for the wait',
    });
    bodies.push(JSON.stringify(r.json));
    expect(r.status).toBe(201);
    expect(r.json.message.status).toBe('sent');
    expect(graph.requests.map((q) => q.body)).toEqual([
      {
        recipient: { id: psid },
        messaging_type: 'MESSAGE_TAG',
        tag: 'HUMAN_AGENT',
        message: { text: 'Sorry for the wait' },
      },
    ]);
  });

  it('an agent’s reply at 30 h is refused 409 outside_messaging_window before any request', async () => {
    const psid = customer();
    const { conversationId } = await inbound(svc, 'messenger', orgOf(owner), page, psid, 30);
    const agent = await agentToken(svc, owner, ['write']);
    graph.reset();
    const r = await send('facebook-send-message', agent.token, {
      conversation_id: conversationId,
      text: 'Automated follow-up',
    });
    bodies.push(JSON.stringify(r.json));
    expect(r.status).toBe(409);
    expect(r.json.error).toBe('outside_messaging_window');
    expect(r.json.details.channel).toBe('messenger');
    expect(graph.requests).toHaveLength(0);
    const [n] = await svc.services.db.query<{ n: number }>(
      "select count(*)::int as n from messages where conversation_id = $1 and direction = 'out'",
      [conversationId],
    );
    expect(n?.n).toBe(0);
  });

  it('a template is refused 400 validation_error: templates are WhatsApp’s', async () => {
    const psid = customer();
    const { contactId } = await inbound(svc, 'messenger', orgOf(owner), page, psid, 1);
    graph.reset();
    const r = await send('facebook-send-message', owner.access_token, {
      contact_id: contactId,
      template: { name: 'order_update', language: 'en_US' },
    });
    bodies.push(JSON.stringify(r.json));
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('validation_error');
    expect(graph.requests).toHaveLength(0);
  });

  it('a contact who never wrote on Messenger (no facebook_psid) cannot be reached there', async () => {
    const made = await call(svc, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      body: { first_name: 'Noor', phone: '+14155550199' },
      headers: { Prefer: 'return=representation' },
    });
    expect(made.status).toBe(201);
    graph.reset();
    const r = await send('facebook-send-message', owner.access_token, {
      contact_id: made.json[0].id,
      text: 'hello',
    });
    expect(r.status).toBe(400);
    expect(graph.requests).toHaveLength(0);
  });
});

describe('Instagram', () => {
  it('within 24 h: POST {META_INSTAGRAM_GRAPH_URL}/{version}/{ig-user-id}/messages, recipient and message only', async () => {
    const igsid = customer();
    const { contactId } = await inbound(svc, 'instagram', orgOf(owner), ig, igsid, 3);
    graph.reset();
    instagramGraph.reset();
    const r = await send('instagram-send-message', owner.access_token, {
      contact_id: contactId,
      text: 'Thanks for writing',
    });
    bodies.push(JSON.stringify(r.json));
    expect(r.status).toBe(201);
    expect(r.json.message.status).toBe('sent');
    expect(typeof r.json.message.provider_message_id).toBe('string');
    expect(graph.requests).toHaveLength(0); // not graph.facebook.com: Instagram's own host
    expect(instagramGraph.requests).toHaveLength(1);
    const [req] = instagramGraph.requests;
    expect(req?.path).toBe(`/${svc.services.config.graph.version}/${IG_ID}/messages`);
    expect(req?.headers.authorization).toBe(`Bearer ${IG_TOKEN}`);
    expect(req?.headers['content-type']).toMatch(/^application\/json/);
    expect(req?.body).toEqual({ recipient: { id: igsid }, message: { text: 'Thanks for writing' } });
  });

  it('a person’s reply at 30 h carries MESSAGE_TAG HUMAN_AGENT; an agent’s is refused before any request', async () => {
    const igsid = customer();
    const { conversationId } = await inbound(svc, 'instagram', orgOf(owner), ig, igsid, 30);
    instagramGraph.reset();
    const agent = await agentToken(svc, owner, ['write']);
    const refused = await send('instagram-send-message', agent.token, {
      conversation_id: conversationId,
      text: 'Automated follow-up',
    });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toBe('outside_messaging_window');
    expect(instagramGraph.requests).toHaveLength(0);
    const ok = await send('instagram-send-message', owner.access_token, {
      conversation_id: conversationId,
      text: 'A person here',
    });
    bodies.push(JSON.stringify(ok.json), JSON.stringify(refused.json));
    expect(ok.status).toBe(201);
    expect(instagramGraph.requests.map((q) => q.body)).toEqual([
      {
        recipient: { id: igsid },
        messaging_type: 'MESSAGE_TAG',
        tag: 'HUMAN_AGENT',
        message: { text: 'A person here' },
      },
    ]);
  });
});

describe('secrets', () => {
  it('no access token in any answer or log line of this file', () => {
    for (const secret of [PAGE_TOKEN, IG_TOKEN]) {
      expect(svc.logs()).not.toContain(secret);
      for (const b of bodies) expect(b).not.toContain(secret);
    }
  });
});

// Conversations and messages: found or created from a channel identity (once, under concurrency,
// within the contacts ceiling), listed for people (functions/v1/conversations, …/messages) and
// by cursor for agents, and read-only and tenant-isolated at /rest/v1.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ConversationItem,
  listConversations,
  openConversationFor,
} from '../../src/domain/conversations.ts';
import type { Principal } from '../../src/platform/db/database.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { agentPrincipal, humanPrincipal } from '../rls/fixtures.ts';

let svc: TestService;
let owner: Session;
let other: Session;
let me: Principal;
let whatsapp: string;
let page: string;
let seq = 0;

const connect = async (s: Session, provider: string) => {
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: s.access_token,
    body: {
      provider,
      external_id: `${provider}-${process.pid}-${++seq}${provider === 'shopify' ? '.myshopify.com' : ''}`,
      access_token: 'tok',
      webhook_secret: 'hook',
    },
  });
  if (r.status !== 201) throw new Error(`connect failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.id as string;
};
const phone = () => `+1415${String(5550000 + (++seq % 10000) + (process.pid % 1000) * 10).padStart(7, '0')}`;

/** A message as the sender or the webhook receiver writes it (service path). */
async function addMessage(
  org: string,
  conversationId: string,
  accountId: string,
  m: Record<string, unknown>,
) {
  const cols = Object.keys(m);
  const [row] = await svc.services.db.query<{ id: string }>(
    `insert into messages (organization_id, conversation_id, account_id, ${cols.join(', ')})
     values ($1, $2, $3, ${cols.map((_, i) => `$${i + 4}`).join(', ')}) returning id`,
    [org, conversationId, accountId, ...Object.values(m)],
  );
  // The database stamps created_at (its clock, in milliseconds on PGlite): the next message is
  // written a few milliseconds later, so the newest-first order is the order written here.
  await new Promise((resolve) => setTimeout(resolve, 3));
  return (row as { id: string }).id;
}

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Inbox A');
  other = await signUp(svc, 'Inbox B');
  me = humanPrincipal(owner.user.id, orgOf(owner), 'owner');
  whatsapp = await connect(owner, 'whatsapp');
  page = await connect(owner, 'facebook');
});
afterAll(() => svc?.stop());

describe('finding or creating the contact and conversation', () => {
  it('gives ten concurrent callers the same contact and conversation, created once', async () => {
    const wa = phone().slice(1);
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        openConversationFor(svc.services, me, {
          account_id: whatsapp,
          identity: { channel: 'whatsapp', id: wa, name: 'Ana Lima' },
        }),
      ),
    );
    expect(new Set(results.map((r) => r.conversation.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.contact_id)).size).toBe(1);
    expect(results.filter((r) => r.contact_created)).toHaveLength(1);
    const [contact] = await svc.services.db.query<{
      phone: string;
      whatsapp_id: string;
      first_name: string;
      source: string;
    }>('select phone, whatsapp_id, first_name, source from contacts where id = $1', [results[0]?.contact_id]);
    expect(contact).toEqual({ phone: `+${wa}`, whatsapp_id: wa, first_name: 'Ana Lima', source: 'whatsapp' });
    expect(results[0]?.conversation).toMatchObject({
      channel: 'whatsapp',
      status: 'open',
      unread_count: 0,
      account_id: whatsapp,
    });
  });

  it('reads a WhatsApp identity in any phone form, and claims an existing contact with that phone', async () => {
    const p = phone();
    const [existing] = await svc.services.db.query<{ id: string }>(
      "insert into contacts (organization_id, first_name, phone) values ($1, 'Known', $2) returning id",
      [orgOf(owner), p],
    );
    const spaced = `${p.slice(0, 2)} ${p.slice(2, 5)} ${p.slice(5, 8)}-${p.slice(8)}`;
    const a = await openConversationFor(svc.services, me, {
      account_id: whatsapp,
      identity: { channel: 'whatsapp', id: spaced },
    });
    const b = await openConversationFor(svc.services, me, {
      account_id: whatsapp,
      identity: { channel: 'whatsapp', id: p.slice(1) },
    });
    expect(a.contact_id).toBe(existing?.id);
    expect(b.contact_id).toBe(existing?.id);
    expect(a.contact_created).toBe(false);
    expect(b.conversation.id).toBe(a.conversation.id);
  });

  it('uses the page-scoped id on Messenger, and refuses an identity of another channel (400)', async () => {
    const r = await openConversationFor(svc.services, me, {
      account_id: page,
      identity: { channel: 'messenger', id: `psid${++seq}` },
    });
    expect(r.conversation.channel).toBe('messenger');
    const long = await openConversationFor(svc.services, me, {
      account_id: page,
      identity: { channel: 'messenger', id: `psid${++seq}`, name: 'N'.repeat(300) },
    });
    const [named] = await svc.services.db.query<{ n: number }>(
      'select length(first_name)::int as n from contacts where id = $1',
      [long.contact_id],
    );
    expect(named?.n).toBe(200);
    await expect(
      openConversationFor(svc.services, me, {
        account_id: page,
        identity: { channel: 'whatsapp', id: phone() },
      }),
    ).rejects.toMatchObject({ status: 400, code: 'validation_error' });
  });

  it('finds no account of another tenant, a disconnected or a Shopify account (404), and refuses read-only callers', async () => {
    const theirs = await connect(other, 'whatsapp');
    const shop = await connect(owner, 'shopify');
    const gone = await connect(owner, 'whatsapp');
    await call(svc, 'DELETE', '/functions/v1/connected-accounts', {
      token: owner.access_token,
      body: { id: gone },
    });
    for (const account of [theirs, shop, gone]) {
      await expect(
        openConversationFor(svc.services, me, {
          account_id: account,
          identity: { channel: 'whatsapp', id: phone() },
        }),
      ).rejects.toMatchObject({ status: 404 });
    }
    const [key] = await svc.services.db.query<{ id: string }>(
      `insert into agent_api_keys (organization_id, name, key_prefix, key_hash, scopes, expires_at)
       values ($1, 'reader', $2, 'x', '{read}', now() + interval '1 day') returning id`,
      [orgOf(owner), `svc_ak_${String(process.pid % 100000).padStart(5, '0')}`.slice(0, 12)],
    );
    const reader = agentPrincipal(key?.id as string, orgOf(owner), ['read']);
    await expect(
      openConversationFor(svc.services, reader, {
        account_id: whatsapp,
        identity: { channel: 'whatsapp', id: phone() },
      }),
    ).rejects.toMatchObject({ code: '42501' });
  });

  it('respects the contacts ceiling of the plan for new contacts, not for known ones', async () => {
    const full = await signUp(svc, 'Full house');
    const account = await connect(full, 'whatsapp');
    const principal = humanPrincipal(full.user.id, orgOf(full), 'owner');
    const known = phone();
    await openConversationFor(svc.services, principal, {
      account_id: account,
      identity: { channel: 'whatsapp', id: known },
    });
    await svc.services.db.query(
      "insert into contacts (organization_id, first_name) select $1, 'c' || n from generate_series(1, 49) n",
      [orgOf(full)],
    );
    await expect(
      openConversationFor(svc.services, principal, {
        account_id: account,
        identity: { channel: 'whatsapp', id: phone() },
      }),
    ).rejects.toMatchObject({ code: 'SV403' });
    const again = await openConversationFor(svc.services, principal, {
      account_id: account,
      identity: { channel: 'whatsapp', id: known },
    });
    expect(again.contact_created).toBe(false);
  });
});

describe('listing', () => {
  let convA: string;
  let convB: string;
  let contactB: string;
  beforeAll(async () => {
    const a = await openConversationFor(svc.services, me, {
      account_id: whatsapp,
      identity: { channel: 'whatsapp', id: phone(), name: 'Bruno' },
    });
    const b = await openConversationFor(svc.services, me, {
      account_id: page,
      identity: { channel: 'messenger', id: `psid-list-${++seq}`, name: 'Carla' },
    });
    convA = a.conversation.id;
    convB = b.conversation.id;
    contactB = b.contact_id;
    const org = orgOf(owner);
    // An outbound message counts against the plan's monthly messages, which free does not have.
    await setPlan(svc, owner, 'starter');
    await addMessage(org, convA, whatsapp, {
      direction: 'out',
      type: 'text',
      body: 'Hello Bruno',
      status: 'sent',
    });
    for (let i = 1; i <= 3; i++) {
      await addMessage(org, convB, page, {
        direction: 'in',
        type: 'text',
        body: `Question ${i}`,
        status: 'received',
      });
    }
    await addMessage(org, convB, page, {
      direction: 'in',
      type: 'image',
      media_url: 'https://x.test/i.jpg',
      status: 'received',
    });
  });

  it('functions/v1/conversations: newest activity first, with contact name and last-message preview', async () => {
    const r = await call(svc, 'GET', '/functions/v1/conversations?per_page=100', {
      token: owner.access_token,
    });
    expect(r.status).toBe(200);
    expect(r.json.pagination).toMatchObject({ page: 1, per_page: 100 });
    const ids = r.json.data.map((c: ConversationItem) => c.id);
    expect(ids.indexOf(convB)).toBeLessThan(ids.indexOf(convA));
    const b = r.json.data.find((c: ConversationItem) => c.id === convB);
    expect(b).toMatchObject({
      channel: 'messenger',
      unread_count: 4,
      contact: { id: contactB, name: 'Carla' },
      last_message: { direction: 'in', type: 'image', preview: '[image]' },
    });
    expect(b.last_inbound_at).toEqual(expect.any(String));
    const a = r.json.data.find((c: ConversationItem) => c.id === convA);
    expect(a).toMatchObject({
      unread_count: 0,
      last_inbound_at: null,
      last_message: { preview: 'Hello Bruno' },
    });
    const times = r.json.data.map((c: ConversationItem) => Date.parse(c.last_message_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
  });

  it('filters by channel, status, contact, unread and updated_since, and pages', async () => {
    const q = async (query: string) =>
      (await call(svc, 'GET', `/functions/v1/conversations?${query}`, { token: owner.access_token })).json;
    expect(
      (await q('channel=messenger')).data.every((c: ConversationItem) => c.channel === 'messenger'),
    ).toBe(true);
    expect((await q('unread_only=true')).data.map((c: ConversationItem) => c.id)).toEqual([convB]);
    expect((await q(`contact_id=${contactB}`)).data.map((c: ConversationItem) => c.id)).toEqual([convB]);
    expect((await q('status=resolved')).data).toEqual([]);
    expect((await q(`updated_since=${new Date(Date.now() + 60_000).toISOString()}`)).data).toEqual([]);
    const one = await q('per_page=1&page=2');
    expect(one.data).toHaveLength(1);
    expect(one.pagination.total).toBeGreaterThanOrEqual(3);
    const bad = await call(svc, 'GET', '/functions/v1/conversations?status=lost&per_page=500', {
      token: owner.access_token,
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('validation_error');
  });

  it('lists by cursor for agents, without repeats, in the same order', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const pageOf = await listConversations(svc.services, me, { limit: 2, cursor });
      seen.push(...pageOf.conversations.map((c) => c.id));
      cursor = pageOf.next_cursor ?? undefined;
    } while (cursor);
    const all = await call(svc, 'GET', '/functions/v1/conversations?per_page=100', {
      token: owner.access_token,
    });
    expect(seen).toEqual(all.json.data.map((c: ConversationItem) => c.id));
  });

  it('functions/v1/conversations/{id}/messages: newest first, paged; another tenant’s id is 404', async () => {
    const r = await call(svc, 'GET', `/functions/v1/conversations/${convB}/messages?per_page=2`, {
      token: owner.access_token,
    });
    expect(r.status).toBe(200);
    expect(r.json.pagination).toEqual({ page: 1, per_page: 2, total: 4, total_pages: 2 });
    expect(r.json.data.map((m: { type: string }) => m.type)).toEqual(['image', 'text']);
    expect(r.json.data[1]).toMatchObject({ body: 'Question 3', direction: 'in', status: 'received' });
    const theirs = await call(svc, 'GET', `/functions/v1/conversations/${convB}/messages`, {
      token: other.access_token,
    });
    const unknown = await call(
      svc,
      'GET',
      '/functions/v1/conversations/00000000-0000-4000-8000-000000000000/messages',
      {
        token: other.access_token,
      },
    );
    expect(theirs.status).toBe(404);
    expect(theirs.json).toEqual(unknown.json);
    expect(
      (await call(svc, 'GET', '/functions/v1/conversations', { token: other.access_token })).json.data,
    ).toEqual([]);
  });

  it('/rest/v1 reads conversations and messages of the caller’s tenant only, and writes nothing but triage', async () => {
    for (const table of ['conversations', 'messages']) {
      const mine = await call(svc, 'GET', `/rest/v1/${table}?select=id,organization_id`, {
        token: owner.access_token,
      });
      expect(mine.status).toBe(200);
      expect(mine.json.length).toBeGreaterThan(0);
      expect(mine.json.every((x: { organization_id: string }) => x.organization_id === orgOf(owner))).toBe(
        true,
      );
      const theirs = await call(svc, 'GET', `/rest/v1/${table}`, { token: other.access_token });
      expect(theirs.json).toEqual([]);
      const id = mine.json[0].id;
      const post = await call(svc, 'POST', `/rest/v1/${table}`, {
        token: owner.access_token,
        body: { status: 'open' },
      });
      // Triage (a conversation's status and unread count) is test/conversations/triage.test.ts.
      const patch = await call(svc, 'PATCH', `/rest/v1/${table}?id=eq.${id}`, {
        token: owner.access_token,
        body: table === 'conversations' ? { channel: 'messenger' } : { status: 'read' },
      });
      const del = await call(svc, 'DELETE', `/rest/v1/${table}?id=eq.${id}`, { token: owner.access_token });
      for (const w of [post, patch, del]) expect(w.status).toBe(403);
    }
    const [still] = await svc.services.db.query<{ n: number }>(
      "select count(*)::int as n from conversations where id = $1 and status = $2 and channel = 'whatsapp'",
      [convA, 'open'],
    );
    expect(still?.n).toBe(1);
  });
});

describe('the OpenAPI document', () => {
  it('describes the connected-accounts and conversations functions', async () => {
    const doc = await (await fetch(`${svc.url}/openapi.json`)).json();
    expect(Object.keys(doc.paths['/functions/v1/connected-accounts']).sort()).toEqual([
      'delete',
      'get',
      'post',
    ]);
    expect(doc.paths['/functions/v1/conversations'].get.operationId).toBe('getFunctionsConversations');
    expect(doc.paths['/functions/v1/conversations/{id}/messages'].get).toBeDefined();
    const fields = Object.keys(doc.components.schemas.ConnectedAccount.properties);
    expect(fields).toContain('has_webhook_secret');
    expect(fields.filter((f) => /^access_token|token$|^webhook_secret$|encrypted/.test(f))).toEqual([]);
  });
});

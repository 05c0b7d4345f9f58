// What the worker makes of Meta's deliveries: inbound WhatsApp messages of every kind (one
// contact, named from the profile, and a conversation whose window opens), statuses that only
// move forward or fail with Meta's error, a status that overtakes the send's answer, Messenger and
// Instagram messaging events, and an organization at its contacts ceiling (rejected, then
// imported by a replay after an upgrade).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayEvents } from '../../src/domain/webhook-events.ts';
import { processWebhookEventJob } from '../../src/jobs/process-webhook-event.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { countOf, deliver, fixture, META_ENV, processPending } from './meta.ts';

let graph: FakeGraph;
let svc: TestService;
let owner: Session;
let whatsapp: string;
let page: string;
const PHONE_ID = '106540352242922';
const PAGE_ID = '1234567890123456';
const IG_ID = '17841405309211844';
const WA_ID = '16315551181';
const TOKEN = 'EAAG-wa-token-for-tests';

async function connect(s: Session, provider: string, externalId: string) {
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: s.access_token,
    body: { provider, external_id: externalId, access_token: TOKEN },
  });
  expect(r.status).toBe(201);
  return r.json.id as string;
}

const wa = (name: string, values: Record<string, string> = {}) =>
  fixture(name, { PHONE_NUMBER_ID: PHONE_ID, WA_ID, ...values });

async function message(providerId: string) {
  const [row] = await svc.services.db.query<Record<string, unknown>>(
    'select * from messages where provider_message_id = $1',
    [providerId],
  );
  return row;
}

/** An outbound message as the sender records it, in the WhatsApp conversation with WA_ID. */
async function sentMessage(providerId: string | null, sentAt = 'now()') {
  const [row] = await svc.services.db.query<{ id: string }>(
    `insert into messages (organization_id, conversation_id, account_id, direction, type, body, status,
                           provider_message_id, queued_at, sent_at)
     select v.organization_id, v.id, v.account_id, 'out', 'text', 'Your order shipped', 'sent', $2, now(), ${sentAt}
       from conversations v where v.account_id = $1 limit 1 returning id`,
    [whatsapp, providerId],
  );
  return row?.id as string;
}

beforeAll(async () => {
  // Connecting asks Graph whether the token acts for each account (account-proof.ts).
  graph = await startFakeGraph({
    accounts: {
      [PHONE_ID]: { token: TOKEN, channel: 'whatsapp' },
      [PAGE_ID]: { token: TOKEN, channel: 'messenger' },
      [IG_ID]: { token: TOKEN, channel: 'instagram' },
    },
  });
  svc = await startTestService({
    ...META_ENV,
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    META_GRAPH_TIMEOUT_MS: '2000',
    WEBHOOK_RETRY_ATTEMPTS: '3',
  });
  owner = await signUp(svc, 'Inbound shop');
  // A WhatsApp id is an international number: the organization's country (GB) must not read it
  // as a national one (src/domain/phone.ts).
  await svc.services.db.query("update organizations set country = 'GB' where id = $1", [orgOf(owner)]);
  await setPlan(svc, owner, 'starter');
  whatsapp = await connect(owner, 'whatsapp', PHONE_ID);
  page = await connect(owner, 'facebook', PAGE_ID);
  await connect(owner, 'instagram', IG_ID);
});
afterAll(async () => {
  await svc?.stop();
  await graph?.close();
});

describe('inbound WhatsApp messages', () => {
  it('a text creates the contact with its profile name and a conversation whose 24-hour window is open', async () => {
    const now = Math.floor(Date.now() / 1000) - 60;
    expect((await deliver(svc, wa('wa-text', { '1750090702': String(now) }))).status).toBe(200);
    expect(await processPending(svc)).toEqual([{ status: 'done' }]);
    const m = await message('wamid.TEXT_ID');
    expect(m).toMatchObject({
      organization_id: orgOf(owner),
      account_id: whatsapp,
      direction: 'in',
      type: 'text',
      body: 'Does it come in another color?',
      status: 'received',
      media_url: null,
    });
    expect(m?.received_at).toEqual(new Date(now * 1000));
    const [contact] = await svc.services.db.query<Record<string, unknown>>(
      'select * from contacts where organization_id = $1 and whatsapp_id = $2',
      [orgOf(owner), WA_ID],
    );
    expect(contact).toMatchObject({ first_name: 'Sheena Nelson', phone: `+${WA_ID}`, source: 'whatsapp' });
    const [conv] = await svc.services.db.query<Record<string, unknown>>(
      'select * from conversations where id = $1',
      [m?.conversation_id],
    );
    expect(conv?.last_inbound_at).toEqual(new Date(now * 1000));
    expect(conv?.unread_count).toBe(1);
    expect(await countOf(svc, "app.webhook_events where status = 'processed'")).toBe(1);

    // The window it opened lets free-form text out.
    const r = await call(svc, 'POST', '/functions/v1/whatsapp-send-message', {
      token: owner.access_token,
      body: { contact_id: contact?.id, text: 'Yes: blue and green' },
    });
    expect(r.status).toBe(201);
    expect(r.json.message.conversation_id).toBe(m?.conversation_id);
  });

  it('image, location, interactive replies and a reaction become rows of their type, on the same contact', async () => {
    for (const name of ['wa-image', 'wa-location', 'wa-interactive', 'wa-reaction'])
      expect((await deliver(svc, wa(name))).status).toBe(200);
    await processPending(svc);
    expect(await message('wamid.IMAGE_ID')).toMatchObject({
      type: 'image',
      body: 'This one, in blue',
      media_url: null,
      content: { media_id: '1003383421387256', mime_type: 'image/jpeg' },
    });
    expect(await message('wamid.LOCATION_ID')).toMatchObject({
      type: 'location',
      body: null,
      content: { latitude: 37.483253479003906, longitude: -122.14960479736328, name: 'Main Street Beach' },
    });
    expect(await message('wamid.BUTTON_ID')).toMatchObject({
      type: 'interactive',
      body: 'Change',
      content: { type: 'button_reply', button_reply: { id: 'change-button' } },
    });
    expect(await message('wamid.LIST_ID')).toMatchObject({
      type: 'interactive',
      body: 'Express Shipping',
      content: { list_reply: { id: 'priority_express' } },
    });
    expect(await message('wamid.REACTION_ID')).toMatchObject({
      type: 'reaction',
      content: { emoji: '😀', message_id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=' },
    });
    expect(await countOf(svc, 'contacts where whatsapp_id = $1', [WA_ID])).toBe(1);
    expect(await countOf(svc, 'conversations where account_id = $1', [whatsapp])).toBe(1);
    const [conv] = await svc.services.db.query<{ unread_count: number }>(
      'select unread_count from conversations where account_id = $1',
      [whatsapp],
    );
    expect(conv?.unread_count).toBe(6);
  });
});

describe('one delivery, many messages (migrations/0041: one statement each, sent together)', () => {
  it('two new customers in one delivery: each one contact, counted once against the plan, every message stored', async () => {
    const payload = JSON.parse(wa('wa-text')) as {
      entry: { changes: { value: { contacts: unknown[]; messages: Record<string, unknown>[] } }[] }[];
    };
    const value = payload.entry[0]?.changes[0]?.value;
    if (!value) throw new Error('fixture changed');
    const text = (from: string, id: string) => ({ ...value.messages[0], from, id, text: { body: id } });
    value.contacts = [
      { profile: { name: 'Ana' }, wa_id: '16315550101' },
      { profile: { name: 'Bo' }, wa_id: '16315550102' },
    ];
    value.messages = [
      text('16315550101', 'wamid.MANY-1'),
      text('16315550102', 'wamid.MANY-2'),
      text('16315550101', 'wamid.MANY-3'),
      text('16315550101', 'wamid.MANY-1'), // Meta repeating itself: stored once
    ];
    const before = await countOf(svc, 'contacts where organization_id = $1', [orgOf(owner)]);
    expect((await deliver(svc, JSON.stringify(payload))).status).toBe(200);
    expect(await processPending(svc)).toEqual([{ status: 'done' }]);
    for (const id of ['wamid.MANY-1', 'wamid.MANY-2', 'wamid.MANY-3'])
      expect(await message(id)).toBeDefined();
    expect(await countOf(svc, "messages where provider_message_id like 'wamid.MANY-%'")).toBe(3);
    expect(await countOf(svc, 'contacts where whatsapp_id = $1', ['16315550101'])).toBe(1);
    expect(await countOf(svc, 'contacts where whatsapp_id = $1', ['16315550102'])).toBe(1);
    const [counted] = await svc.services.db.query<{ value: number }>(
      "select value::int as value from app.counters where organization_id = $1 and name = 'rows:contacts'",
      [orgOf(owner)],
    );
    expect(counted?.value).toBe(before + 2);
    expect(await countOf(svc, 'contacts where organization_id = $1', [orgOf(owner)])).toBe(before + 2);
    const [conv] = await svc.services.db.query<{ unread_count: number }>(
      `select v.unread_count from conversations v join contacts c on c.organization_id = v.organization_id
         and c.id = v.contact_id where c.whatsapp_id = '16315550101'`,
    );
    expect(conv?.unread_count).toBe(2);
  });

  it('no tenant may store an inbound message itself: app.receive_message is the service path’s', async () => {
    const call = svc.services.db.transaction(async (tx) => {
      await tx.query("select set_config('role', 'authenticated', true)");
      return tx.query(
        `select app.receive_message($1, $2, 'whatsapp', '16315550199', '+16315550199', null, 'text', 'hi',
                                    null, 'wamid.TENANT', null)`,
        [orgOf(owner), whatsapp],
      );
    });
    await expect(call).rejects.toMatchObject({ code: '42501' });
    expect(await message('wamid.TENANT')).toBeUndefined();
  });
});

describe('odd inputs', () => {
  it('a text with an escaped NUL is stored without it', async () => {
    const body = wa('wa-text', { TEXT_ID: 'NUL' }).replace('another color?', 'another\\u0000 color?');
    expect(body).toContain('another\\u0000 color?');
    await deliver(svc, body);
    await processPending(svc);
    expect((await message('wamid.NUL'))?.body).toBe('Does it come in another color?');
  });

  it('a sender Meta gives is received even when our phone library finds its length impossible for its country', async () => {
    // +1 631 555 012: nine digits after the US code, "impossible" to libphonenumber; Meta wrote from it.
    const body = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_ID, WA_ID: '1631555012', TEXT_ID: 'ODDLEN' });
    await deliver(svc, body);
    expect(await processPending(svc)).toEqual([{ status: 'done' }]);
    expect(await message('wamid.ODDLEN')).toMatchObject({
      direction: 'in',
      body: 'Does it come in another color?',
    });
    const [contact] = await svc.services.db.query<{ phone: string }>(
      'select phone from contacts where organization_id = $1 and whatsapp_id = $2',
      [orgOf(owner), '1631555012'],
    );
    expect(contact?.phone).toBe('+1631555012');
  });

  it('a sender that is no phone number fails the event at once, with the reason, without retries', async () => {
    const body = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_ID, WA_ID: 'not-a-number', TEXT_ID: 'BADFROM' });
    await deliver(svc, body);
    expect(await processPending(svc)).toEqual([{ status: 'done' }]);
    const [e] = await svc.services.db.query<Record<string, unknown>>(
      'select status, attempts, last_error from app.webhook_events order by received_at desc limit 1',
    );
    expect(e).toMatchObject({ status: 'failed', attempts: 1 });
    expect(e?.last_error).toBeTruthy();
    expect(await message('wamid.BADFROM')).toBeUndefined();
  });
});

describe('statuses', () => {
  const status = (wamid: string, s: string) => wa('wa-status', { WAMID: wamid, STATUS: s });

  it('move forward only: read, then a late delivered, stays read', async () => {
    const id = await sentMessage('wamid.FORWARD');
    await deliver(svc, status('wamid.FORWARD', 'read'));
    await processPending(svc);
    await deliver(svc, status('wamid.FORWARD', 'delivered'));
    await processPending(svc);
    const [m] = await svc.services.db.query<Record<string, unknown>>('select * from messages where id = $1', [
      id,
    ]);
    expect(m?.status).toBe('read');
    expect(m?.read_at).toBeInstanceOf(Date);
    expect(m?.delivered_at).toBeInstanceOf(Date);
    expect(await countOf(svc, "app.webhook_events where status = 'pending'")).toBe(0);
  });

  it("failed records Meta's error, and nothing moves a failed message afterwards", async () => {
    const id = await sentMessage('wamid.FAILS');
    await deliver(svc, wa('wa-status-failed', { WAMID: 'wamid.FAILS' }));
    await processPending(svc);
    await deliver(svc, status('wamid.FAILS', 'delivered'));
    await processPending(svc);
    const [m] = await svc.services.db.query<Record<string, unknown>>('select * from messages where id = $1', [
      id,
    ]);
    expect(m).toMatchObject({
      status: 'failed',
      error: {
        code: 131049,
        title: 'This message was not delivered to maintain healthy ecosystem engagement.',
        details: 'In order to maintain a healthy ecosystem engagement, the message failed to be delivered.',
      },
    });
    expect(m?.failed_at).toBeInstanceOf(Date);
  });

  it("a status that arrives before the send recorded Meta's id waits, and applies once the id is there", async () => {
    const id = await sentMessage(null);
    await deliver(svc, status('wamid.LATE', 'delivered'));
    expect(await processPending(svc)).toMatchObject([{ status: 'retry' }]);
    const [waiting] = await svc.services.db.query<Record<string, unknown>>(
      "select * from app.webhook_events where status = 'pending'",
    );
    expect(waiting).toMatchObject({ attempts: 1, last_error: 'no such message: wamid.LATE' });
    // The send's answer is recorded; the job's next run finds the message.
    await svc.services.db.query("update messages set provider_message_id = 'wamid.LATE' where id = $1", [id]);
    expect(await processPending(svc)).toEqual([{ status: 'done' }]);
    const [m] = await svc.services.db.query<{ status: string }>('select status from messages where id = $1', [
      id,
    ]);
    expect(m?.status).toBe('delivered');
    const [done] = await svc.services.db.query<Record<string, unknown>>(
      'select * from app.webhook_events where id = $1',
      [waiting?.id],
    );
    expect(done).toMatchObject({ status: 'processed', attempts: 2, last_error: null });
  });

  it('a status whose message never appears ends failed with "no such message" when the retries run out', async () => {
    await deliver(svc, status('wamid.NEVER', 'delivered'));
    await processPending(svc);
    const [e] = await svc.services.db.query<{ organization_id: string; id: string }>(
      "select organization_id, id from app.webhook_events where status = 'pending'",
    );
    const job = processWebhookEventJob({ ...svc.services, secrets: svc.services.secrets });
    await job.onFailed?.(
      {
        id: 'job',
        name: job.name,
        data: { organization_id: e?.organization_id as string, event_id: e?.id as string },
        attempt: 3,
        createdAt: new Date(),
      },
      { reason: 'attempts', error: new Error('no such message: wamid.NEVER') },
    );
    const [failed] = await svc.services.db.query<Record<string, unknown>>(
      'select * from app.webhook_events where id = $1',
      [e?.id],
    );
    expect(failed).toMatchObject({
      status: 'failed',
      attempts: 1,
      last_error: 'no such message: wamid.NEVER',
    });
  });
});

describe('Messenger and Instagram', () => {
  it('Messenger messages (text, image attachment) arrive on the Page, from the PSID', async () => {
    const body = fixture('messenger-message', { PAGE_ID, PSID: '6789012345678901' });
    expect((await deliver(svc, body, { path: 'meta-webhook' })).status).toBe(200);
    await processPending(svc);
    expect(await message('m_MESSENGER_TEXT_ID')).toMatchObject({
      account_id: page,
      type: 'text',
      body: 'hello, world!',
    });
    expect(await message('m_MESSENGER_IMAGE_ID')).toMatchObject({
      type: 'image',
      body: null,
      content: { attachments: [{ type: 'image' }] },
    });
    expect((await message('m_MESSENGER_TEXT_ID'))?.received_at).toEqual(new Date(1750090702123));
    expect(
      await countOf(svc, "contacts where facebook_psid = '6789012345678901' and source = 'messenger'"),
    ).toBe(1);
  });

  it('Messenger delivery and read watermarks move our earlier messages on that conversation to read', async () => {
    const [v] = await svc.services.db.query<{ id: string }>(
      'select id from conversations where account_id = $1',
      [page],
    );
    const [before] = await svc.services.db.query<{ id: string }>(
      `insert into messages (organization_id, conversation_id, account_id, direction, type, body, status,
                             provider_message_id, queued_at, sent_at)
       values ($1, $2, $3, 'out', 'text', 'Thanks!', 'sent', 'm_OUT_1', now(), now() - interval '1 minute') returning id`,
      [orgOf(owner), v?.id, page],
    );
    const watermark = String(Date.now());
    const [after] = await svc.services.db.query<{ id: string }>(
      `insert into messages (organization_id, conversation_id, account_id, direction, type, body, status,
                             provider_message_id, queued_at, sent_at)
       values ($1, $2, $3, 'out', 'text', 'Anything else?', 'sent', 'm_OUT_2', now(), now() + interval '1 minute') returning id`,
      [orgOf(owner), v?.id, page],
    );
    const body = fixture('messenger-read', { PAGE_ID, PSID: '6789012345678901', '"WATERMARK"': watermark });
    expect((await deliver(svc, body, { path: 'meta-webhook' })).status).toBe(200);
    await processPending(svc);
    const rows = await svc.services.db.query<{ id: string; status: string }>(
      'select id, status from messages where id in ($1, $2)',
      [before?.id, after?.id],
    );
    expect(rows.find((r) => r.id === before?.id)?.status).toBe('read');
    expect(rows.find((r) => r.id === after?.id)?.status).toBe('sent');
  });

  it('Instagram messages arrive on the Instagram account, from the Instagram-scoped id', async () => {
    const body = fixture('instagram-message', { IG_ID, IGSID: '1122334455667788' });
    expect((await deliver(svc, body, { path: 'meta-webhook' })).status).toBe(200);
    await processPending(svc);
    expect(await message('aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOjE3ODQxNDA1')).toMatchObject({
      type: 'text',
      body: 'Is this still available?',
    });
    expect(
      await countOf(svc, "contacts where instagram_id = '1122334455667788' and source = 'instagram'"),
    ).toBe(1);
  });
});

describe('plan ceilings', () => {
  it('an organization at its contacts ceiling: the event is rejected with the reason, and a replay after an upgrade imports it', async () => {
    const full = await signUp(svc, 'Full shop');
    const org = orgOf(full);
    const phone = '107777777777777';
    graph.setAccount(phone, { token: TOKEN, channel: 'whatsapp' });
    await connect(full, 'whatsapp', phone);
    await svc.services.db.query(
      `insert into contacts (organization_id, email) select $1, 'c' || g || '@example.test' from generate_series(1, 50) g`,
      [org],
    );
    const body = fixture('wa-text', { PHONE_NUMBER_ID: phone, WA_ID: '14155550199', TEXT_ID: 'CEILING' });
    expect((await deliver(svc, body)).status).toBe(200);
    expect(await processPending(svc)).toEqual([{ status: 'done' }]); // not retried
    const [rejected] = await svc.services.db.query<Record<string, unknown>>(
      'select * from app.webhook_events where organization_id = $1',
      [org],
    );
    expect(rejected?.status).toBe('rejected');
    expect(rejected?.last_error).toMatch(/Free plan allows 50 contacts/);
    expect(await countOf(svc, 'messages where organization_id = $1', [org])).toBe(0);

    await setPlan(svc, full, 'starter');
    expect(await replayEvents(svc.services.db, svc.services.queue, { failed: true })).toContain(rejected?.id);
    await processPending(svc);
    expect(await message('wamid.CEILING')).toMatchObject({
      organization_id: org,
      body: 'Does it come in another color?',
    });
    const [done] = await svc.services.db.query<Record<string, unknown>>(
      'select status, attempts from app.webhook_events where id = $1',
      [rejected?.id],
    );
    expect(done).toEqual({ status: 'processed', attempts: 2 });
  });
});

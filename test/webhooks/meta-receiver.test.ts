// The Meta webhook receiver at the edge: the subscription handshake, signatures over the raw
// bytes (and nothing stored when one is wrong), duplicate deliveries, unknown accounts, routing
// between tenants, and the receiver switched off when it is not configured.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { metaSignature } from '../../src/channels/meta-signature.ts';
import { call, inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import {
  APP_SECRET,
  countOf,
  deliver,
  fixture,
  META_ENV,
  processPending,
  routeInbox,
  VERIFY_TOKEN,
} from './meta.ts';

let svc: TestService;
let ownerA: Session;
let ownerB: Session;
const PHONE_A = '109876543210001';
const PHONE_B = '109876543210002';
const METRICS = 'metrics-token-for-receiver-tests-0123';

async function connect(owner: Session, provider: string, externalId: string) {
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: owner.access_token,
    body: { provider, external_id: externalId, access_token: 'EAAG-token' },
  });
  expect(r.status).toBe(201);
  return r.json.id as string;
}

beforeAll(async () => {
  svc = await startTestService({ ...META_ENV, METRICS_TOKEN: METRICS });
  ownerA = await signUp(svc, 'Tenant A');
  ownerB = await signUp(svc, 'Tenant B');
  await connect(ownerA, 'whatsapp', PHONE_A);
  await connect(ownerB, 'whatsapp', PHONE_B);
});
afterAll(async () => {
  await svc?.stop();
});

const handshake = (query: string, path = 'whatsapp-webhook') =>
  fetch(`${svc.url}/functions/v1/${path}?${query}`);

describe('the subscription handshake', () => {
  it('answers hub.challenge as plain text to the right verify token, on both mounts', async () => {
    for (const path of ['whatsapp-webhook', 'meta-webhook']) {
      const res = await handshake(
        `hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`,
        path,
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toBe('1158201444');
    }
  });

  it('refuses a wrong token or mode with 403 in the error body', async () => {
    for (const q of [
      'hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1',
      `hub.mode=unsubscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`,
      'hub.challenge=1',
    ]) {
      const res = await handshake(q);
      expect(res.status).toBe(403);
      const body = await res.json();
      expect(body).toMatchObject({ error: 'forbidden', details: {} });
      expect(JSON.stringify(body)).not.toContain(VERIFY_TOKEN);
    }
  });
});

describe('signatures', () => {
  const text = () => fixture('wa-text', { PHONE_NUMBER_ID: PHONE_A, WA_ID: '14155550101', TEXT_ID: 'sig1' });

  it('refuses a body changed by one byte, a signature of the re-serialized JSON, a missing or malformed header: 401, nothing stored', async () => {
    const body = text();
    const changed = body.replace('another color', 'another colour');
    const reserialized = JSON.stringify(JSON.parse(body));
    expect(reserialized).not.toBe(body);
    const attempts = [
      await deliver(svc, changed, { signature: metaSignature(body, APP_SECRET) }),
      await deliver(svc, body, { signature: metaSignature(reserialized, APP_SECRET) }),
      await deliver(svc, body, { signature: null }),
      await deliver(svc, body, { signature: 'sha256=abc' }),
      await deliver(svc, body, { signature: metaSignature(body, 'another-secret') }),
    ];
    const messages = new Set<string>();
    for (const r of attempts) {
      expect(r.status).toBe(401);
      expect(r.json.error).toBe('unauthorized');
      messages.add(r.json.message);
    }
    expect(messages.size).toBe(1); // the same words whatever was wrong
    expect(await countOf(svc, 'app.webhook_inbox')).toBe(0);
    await routeInbox(svc);
    expect(await countOf(svc, 'app.webhook_deliveries')).toBe(0);
    expect(await countOf(svc, 'app.webhook_events')).toBe(0);
  });

  it('accepts the exact bytes signed: 200 {received: true} once the raw body is committed; routed into one event and its job', async () => {
    const r = await deliver(svc, text());
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ received: true });
    // Acknowledged means kept: the bytes as sent are in the inbox, committed, before the router ran.
    const kept = await svc.services.db.query<{ payload: string; delivery_id: string }>(
      'select payload, delivery_id from app.webhook_inbox',
    );
    expect(kept).toEqual([{ payload: text(), delivery_id: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(await countOf(svc, 'app.webhook_events')).toBe(0);
    await routeInbox(svc);
    expect(await countOf(svc, 'app.webhook_inbox')).toBe(0);
    expect(await countOf(svc, "app.webhook_events where status = 'pending'")).toBe(1);
    expect(await countOf(svc, "pgboss.job where name = 'process-webhook-event'")).toBe(1);
    await processPending(svc);
    expect(await countOf(svc, "messages where provider_message_id = 'wamid.sig1'")).toBe(1);
    expect(svc.logs()).not.toContain('another color');
    expect(svc.logs()).not.toContain(metaSignature(text(), APP_SECRET).slice(7));
  });

  it('answers 400 to a signed body that is not JSON or not a Meta delivery, and stores nothing', async () => {
    const before = await countOf(svc, 'app.webhook_deliveries');
    expect((await deliver(svc, '{"object": "whatsapp_business_account",')).status).toBe(400);
    expect((await deliver(svc, '{"object": "user", "entry": []}')).status).toBe(400);
    expect((await deliver(svc, '{"object": "page"}')).status).toBe(400);
    expect(await countOf(svc, 'app.webhook_deliveries')).toBe(before);
  });
});

describe('the HTTP surface (deliveries are served before the app, as the app served them)', () => {
  const received = async () => {
    const res = await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } });
    const line = (await res.text())
      .split('\n')
      .find(
        (l) =>
          l.startsWith('svc_http_request_duration_seconds_count{') &&
          l.includes('route="/functions/v1/:name"') &&
          l.includes('target="whatsapp-webhook"') &&
          l.includes('method="POST"') &&
          l.includes('status="200"'),
      );
    return Number(line?.split(' ').at(-1) ?? 0);
  };

  it('keeps the request id, sends the CORS headers, writes the access line and counts the request by route', async () => {
    const before = await received();
    const body = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_B, WA_ID: '14155550107', TEXT_ID: 'surface' });
    const r = await deliver(svc, body, { headers: { 'x-request-id': 'inbox-surface-0001' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('inbox-surface-0001');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    await vi.waitFor(() =>
      expect(svc.logs()).toMatch(
        /"req_id":"inbox-surface-0001","method":"POST","path":"\/functions\/v1\/whatsapp-webhook","status":200/,
      ),
    );
    expect(await received()).toBe(before + 1);
    await processPending(svc);
  });

  it('refuses a chunked body once it outgrows WEBHOOK_BODY_LIMIT_BYTES: 413, nothing kept', async () => {
    const limit = svc.services.config.webhookBodyLimitBytes;
    const inbox = await countOf(svc, 'app.webhook_inbox');
    const chunk = new Uint8Array(64 * 1024).fill(120);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > limit) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${svc.url}/functions/v1/whatsapp-webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'payload_too_large', details: { limit_bytes: limit } });
    expect(await countOf(svc, 'app.webhook_inbox')).toBe(inbox);
  });
});

describe('body size', () => {
  it('refuses a delivery over WEBHOOK_BODY_LIMIT_BYTES with 413 before reading it, and stores nothing', async () => {
    const limit = svc.services.config.webhookBodyLimitBytes;
    const big = `{"object":"page","entry":[],"pad":"${'x'.repeat(limit)}"}`;
    const before = await countOf(svc, 'app.webhook_deliveries');
    const r = await deliver(svc, big);
    expect(r.status).toBe(413);
    expect(r.json).toMatchObject({ error: 'payload_too_large', details: { limit_bytes: limit } });
    expect(await countOf(svc, 'app.webhook_deliveries')).toBe(before);
  });

  it('takes a delivery larger than BODY_LIMIT_BYTES, the limit of every other request', async () => {
    const pad = 'x'.repeat(svc.services.config.bodyLimitBytes);
    const body = `{"object":"whatsapp_business_account","entry":[],"pad":"${pad}"}`;
    expect((await deliver(svc, body)).status).toBe(200);
  });
});

describe('deliveries', () => {
  it('a duplicate delivery stores one event and one message', async () => {
    const body = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_A, WA_ID: '14155550102', TEXT_ID: 'dup1' });
    expect((await deliver(svc, body)).status).toBe(200);
    expect((await deliver(svc, body)).status).toBe(200);
    await processPending(svc);
    expect((await deliver(svc, body)).status).toBe(200);
    await processPending(svc);
    expect(await countOf(svc, "messages where provider_message_id = 'wamid.dup1'")).toBe(1);
    expect(await countOf(svc, 'app.webhook_events where organization_id = $1', [orgOf(ownerA)])).toBe(2); // sig1, dup1
  });

  it('the same delivery arriving five times at once stores one delivery and one event', async () => {
    const body = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_A, WA_ID: '14155550105', TEXT_ID: 'race' });
    const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(svc, body)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    await routeInbox(svc);
    expect(await countOf(svc, 'app.webhook_deliveries where payload like $1', ['%wamid.race%'])).toBe(1);
    await processPending(svc);
    expect(await countOf(svc, "messages where provider_message_id = 'wamid.race'")).toBe(1);
  });

  it("a number that moves to another tenant: the next delivery is that tenant's, its job with it", async () => {
    // The router (src/domain/webhook-inbox.ts) routes by what is connected when it runs, and an
    // event's job is keyed by the organization that routing found, in the same statement.
    const PHONE_M = '109876543210003';
    const jobOf = async (text: string) => {
      const [e] = await svc.services.db.query<{ organization_id: string; id: string }>(
        `select e.organization_id, e.id from app.webhook_events e
           join app.webhook_deliveries d on d.id = e.delivery where d.payload like $1`,
        [`%${text}%`],
      );
      if (!e) return null;
      const jobs = await countOf(svc, 'pgboss.job where id = app.job_key_id($1, $2)', [
        'process-webhook-event',
        `${e.organization_id}/${e.id}`,
      ]);
      return { organization_id: e.organization_id, jobs };
    };
    const idA = await connect(ownerA, 'whatsapp', PHONE_M);
    const first = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_M, WA_ID: '14155550106', TEXT_ID: 'moved1' });
    const second = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_M, WA_ID: '14155550106', TEXT_ID: 'moved2' });
    expect((await deliver(svc, first)).status).toBe(200);
    await routeInbox(svc);
    expect(await jobOf('wamid.moved1')).toEqual({ organization_id: orgOf(ownerA), jobs: 1 });
    const gone = await call(svc, 'DELETE', '/functions/v1/connected-accounts', {
      token: ownerA.access_token,
      body: { id: idA },
    });
    expect(gone.status).toBeLessThan(300);
    await connect(ownerB, 'whatsapp', PHONE_M);
    expect((await deliver(svc, second)).status).toBe(200);
    await routeInbox(svc);
    expect(await jobOf('wamid.moved2')).toEqual({ organization_id: orgOf(ownerB), jobs: 1 });
    await processPending(svc);
  });

  it('an unknown phone_number_id is acknowledged, logged by id, and nothing is stored for anyone', async () => {
    const events = await countOf(svc, 'app.webhook_events');
    const messages = await countOf(svc, 'messages');
    const body = fixture('wa-text', {
      PHONE_NUMBER_ID: '199999999999999',
      WA_ID: '14155550103',
      TEXT_ID: 'nobody',
    });
    const r = await deliver(svc, body);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ received: true });
    await routeInbox(svc);
    expect(await countOf(svc, 'app.webhook_inbox')).toBe(0);
    expect(await countOf(svc, 'app.webhook_events')).toBe(events);
    expect(await countOf(svc, 'app.webhook_deliveries where payload like $1', ['%nobody%'])).toBe(0);
    await processPending(svc);
    expect(await countOf(svc, 'messages')).toBe(messages);
    expect(svc.logs()).toContain('199999999999999');
  });

  it("routes each entry to its own tenant: A's number never lands in B, one delivery for both splits in two", async () => {
    const a = JSON.parse(
      fixture('wa-text', { PHONE_NUMBER_ID: PHONE_A, WA_ID: '14155550104', TEXT_ID: 'toA' }),
    );
    const b = JSON.parse(
      fixture('wa-text', { PHONE_NUMBER_ID: PHONE_B, WA_ID: '14155550104', TEXT_ID: 'toB' }),
    );
    const both = JSON.stringify({ object: a.object, entry: [...a.entry, ...b.entry] });
    expect((await deliver(svc, both)).status).toBe(200);
    await processPending(svc);
    const rows = await svc.services.db.query<{ organization_id: string; provider_message_id: string }>(
      "select organization_id, provider_message_id from messages where provider_message_id in ('wamid.toA', 'wamid.toB')",
    );
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.provider_message_id === 'wamid.toA')?.organization_id).toBe(orgOf(ownerA));
    expect(rows.find((r) => r.provider_message_id === 'wamid.toB')?.organization_id).toBe(orgOf(ownerB));
    // Each tenant's contact is its own.
    expect(await countOf(svc, "contacts where whatsapp_id = '14155550104'")).toBe(2);
    // Owners see their own events only (the later webhook-events listing reads through this policy).
    const seen = await svc.services.db.asPrincipal(
      {
        kind: 'user',
        userId: ownerB.user.id,
        claims: JSON.parse(Buffer.from(ownerB.access_token.split('.')[1] as string, 'base64url').toString()),
      },
      (tx) => tx.query<{ organization_id: string }>('select organization_id from app.webhook_events'),
    );
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((e) => e.organization_id === orgOf(ownerB))).toBe(true);
  });

  it('a plain member reads no events, and no signed-in caller reads raw deliveries', async () => {
    const member = await signUp(svc);
    const token = await inviteAndAccept(svc, ownerA, member, 'member');
    const as = (t: string) => ({
      kind: 'user' as const,
      userId: member.user.id,
      claims: JSON.parse(Buffer.from(t.split('.')[1] as string, 'base64url').toString()),
    });
    const events = await svc.services.db.asPrincipal(as(token), (tx) =>
      tx.query('select id from app.webhook_events'),
    );
    expect(events).toEqual([]);
    const owner = { ...as(ownerA.access_token), userId: ownerA.user.id };
    const mine = await countOf(svc, 'app.webhook_events where organization_id = $1', [orgOf(ownerA)]);
    expect(mine).toBeGreaterThan(0); // the earlier tests' deliveries
    const seen = await svc.services.db.asPrincipal(owner, (tx) =>
      tx.query('select id from app.webhook_events'),
    );
    expect(seen).toHaveLength(mine);
    await expect(
      svc.services.db.asPrincipal(owner, (tx) => tx.query('select payload from app.webhook_deliveries')),
    ).rejects.toThrow(/permission denied/);
  });
});

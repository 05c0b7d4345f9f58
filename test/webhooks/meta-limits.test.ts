// The receiver's surroundings: 500 deliveries per minute per address (the 501st is 429 with
// Retry-After), a receiver without its configuration answers 404, and with the worker running in
// the service a delivery becomes a message the owner reads at /rest/v1/messages.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { APP_SECRET, deliver, fixture, VERIFY_TOKEN } from './meta.ts';

let svc: TestService;
let owner: Session;
const PHONE_ID = '108888888888888';
/** Every request to the receivers from this test's address counts against its per-minute budget. */
let requests = 0;
const post = (body: string) => {
  requests++;
  return deliver(svc, body);
};

beforeAll(async () => {
  // The worker runs in the service, polling fast, as `npm start` runs it.
  svc = await startTestService({
    META_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
    WORKER_POLL_MS: '500',
    WEBHOOK_RETRY_BACKOFF_SECONDS: '1',
  });
  owner = await signUp(svc, 'Worker shop');
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: owner.access_token,
    body: { provider: 'whatsapp', external_id: PHONE_ID, access_token: 'EAAG-token' },
  });
  expect(r.status).toBe(201);
});
afterAll(async () => {
  await svc?.stop();
});

describe('the worker', () => {
  it('turns a delivery into a message the owner reads at /rest/v1/messages within seconds', async () => {
    const body = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_ID, WA_ID: '14155550177', TEXT_ID: 'WORKER' });
    expect((await post(body)).status).toBe(200);
    const deadline = Date.now() + 15_000;
    let rows: { provider_message_id: string; direction: string }[] = [];
    while (Date.now() < deadline) {
      const r = await call(svc, 'GET', '/rest/v1/messages?select=provider_message_id,direction', {
        token: owner.access_token,
      });
      rows = r.json;
      if (rows.length) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(rows).toEqual([{ provider_message_id: 'wamid.WORKER', direction: 'in' }]);
  });
});

/** Polls `check` until it is truthy or 20 s pass. */
async function eventually<T>(check: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await check();
    if (v || Date.now() > deadline) return v;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the worker retries', () => {
  it("a status delivered before the send recorded Meta's id: the job's retries apply it once the id is there", async () => {
    await setPlan(svc, owner, 'starter');
    const db = svc.services.db;
    const [m] = await db.query<{ id: string }>(
      `insert into messages (organization_id, conversation_id, account_id, direction, type, body, status, queued_at, sent_at)
       select v.organization_id, v.id, v.account_id, 'out', 'text', 'On its way', 'sent', now(), now()
         from conversations v where v.organization_id = $1 limit 1 returning id`,
      [orgOf(owner)],
    );
    const body = fixture('wa-status', {
      PHONE_NUMBER_ID: PHONE_ID,
      WA_ID: '14155550177',
      WAMID: 'wamid.RETRY',
      STATUS: 'read',
    });
    expect((await post(body)).status).toBe(200);
    const waiting = await eventually(async () => {
      const [e] = await db.query<{ id: string; attempts: number; status: string; last_error: string | null }>(
        "select id, attempts, status, last_error from app.webhook_events where topic = 'whatsapp_business_account' and last_error like '%wamid.RETRY%'",
      );
      return e;
    });
    expect(waiting).toMatchObject({ status: 'pending', last_error: 'no such message: wamid.RETRY' });
    await db.query("update messages set provider_message_id = 'wamid.RETRY' where id = $1", [m?.id]);
    const done = await eventually(async () => {
      const [e] = await db.query<{ status: string; attempts: number }>(
        "select status, attempts from app.webhook_events where id = $1 and status = 'processed'",
        [waiting?.id],
      );
      return e;
    });
    expect(done?.attempts).toBeGreaterThanOrEqual(2);
    const [after] = await db.query<{ status: string }>('select status from messages where id = $1', [m?.id]);
    expect(after?.status).toBe('read');
  }, 30_000);
});

describe('rate limit', () => {
  it('allows exactly the configured 500 deliveries a minute from one address; the 501st is 429 with Retry-After', async () => {
    expect(svc.services.config.rateLimits.webhookPerMinute).toBe(500);
    const body = '{"object":"whatsapp_business_account","entry":[]}';
    // The earlier tests' deliveries counted too.
    const statuses: number[] = [];
    while (requests < 500) statuses.push((await post(body)).status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(0);
    const refused = await post(body);
    expect(refused.status).toBe(429);
    expect(refused.json.error).toBe('rate_limit_exceeded');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The handshake shares the address's budget.
    const hs = await fetch(
      `${svc.url}/functions/v1/meta-webhook?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`,
    );
    expect(hs.status).toBe(429);
  });
});

describe('not configured', () => {
  it('answers 404 not_found to GET and POST when META_APP_SECRET and WHATSAPP_VERIFY_TOKEN are unset', async () => {
    const bare = await startTestService({ WORKER: 'off' });
    try {
      const get = await fetch(
        `${bare.url}/functions/v1/whatsapp-webhook?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1`,
      );
      expect(get.status).toBe(404);
      expect((await get.json()).error).toBe('not_found');
      const post = await deliver(bare, '{"object":"page","entry":[]}', { path: 'meta-webhook' });
      expect(post.status).toBe(404);
      expect(post.json.error).toBe('not_found');
    } finally {
      await bare.stop();
    }
  });
});

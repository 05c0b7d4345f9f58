// The webhook inbox's router (docs/decisions.md "The durable webhook inbox"): with the worker in
// the service, a receipt wakes it and the event is processed without waiting for any poll (both
// polls are set to a minute here); routers of several processes take each row once (`for update
// skip locked`), whatever the batches and duplicates; the processing lag counts from the receipt.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookInboxRouter } from '../../src/domain/webhook-inbox.ts';
import { call, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { APP_SECRET, countOf, deliver, fixture, META_ENV, routed, VERIFY_TOKEN } from './meta.ts';

const PHONE_ID = '107777777777001';

async function connect(svc: TestService, owner: Session) {
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: owner.access_token,
    body: { provider: 'whatsapp', external_id: PHONE_ID, access_token: 'EAAG-token' },
  });
  expect(r.status).toBe(201);
}

describe('the inline worker', () => {
  let svc: TestService;
  let owner: Session;
  beforeAll(async () => {
    svc = await startTestService({
      META_APP_SECRET: APP_SECRET,
      WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
      // Neither poll comes within the test: only the receipt's wake-up can route and process.
      WEBHOOK_INBOX_POLL_MS: '60000',
      WORKER_POLL_MS: '60000',
    });
    owner = await signUp(svc, 'Inbox wake shop');
    await connect(svc, owner);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it("is woken by the receipt: the event is routed and processed at once, received at the receipt's time", async () => {
    const body = fixture('wa-text', { PHONE_NUMBER_ID: PHONE_ID, WA_ID: '14155550188', TEXT_ID: 'WAKE' });
    expect((await deliver(svc, body)).status).toBe(200);
    await routed(svc);
    const end = Date.now() + 15_000;
    let status: string | undefined;
    while (status !== 'processed' && Date.now() < end) {
      const r = await call(svc, 'GET', '/functions/v1/webhook-events', { token: owner.access_token });
      status = r.json.data[0]?.status;
      if (status !== 'processed') await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe('processed');
    const messages = await call(svc, 'GET', '/rest/v1/messages?select=provider_message_id', {
      token: owner.access_token,
    });
    expect(messages.json).toEqual([{ provider_message_id: 'wamid.WAKE' }]);
    // The event's received time is its receipt's (the inbox row's), not its routing's.
    const [times] = await svc.services.db.query<{ same: boolean }>(
      'select e.received_at = d.received_at as same from app.webhook_events e join app.webhook_deliveries d on d.id = e.delivery',
    );
    expect(times).toEqual({ same: true });
  });
});

describe('routers of several processes', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(META_ENV); // WORKER=off: the test's routers are the only ones
    await connect(svc, await signUp(svc, 'Inbox race shop'));
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('take each row once: 30 receipts (10 of them retries) become 20 deliveries, 20 events and 20 jobs', async () => {
    const bodies = Array.from({ length: 20 }, (_, n) =>
      fixture('wa-text', { PHONE_NUMBER_ID: PHONE_ID, WA_ID: '14155550189', TEXT_ID: `RACE${n}` }),
    );
    for (const body of [...bodies, ...bodies.slice(0, 10)])
      expect((await deliver(svc, body)).status).toBe(200);
    expect(await countOf(svc, 'app.webhook_inbox')).toBe(30);
    const drain = async () => {
      const router = webhookInboxRouter(svc.services.db, svc.services.queue, 4);
      let taken = 0;
      for (let b = await router.route(); b.taken > 0; b = await router.route()) taken += b.taken;
      return taken;
    };
    const taken = await Promise.all([drain(), drain(), drain()]);
    expect(taken.reduce((a, b) => a + b)).toBe(30);
    expect(await countOf(svc, 'app.webhook_inbox')).toBe(0);
    expect(await countOf(svc, 'app.webhook_deliveries')).toBe(20);
    expect(await countOf(svc, 'app.webhook_events')).toBe(20);
    expect(await countOf(svc, "pgboss.job where name = 'process-webhook-event'")).toBe(20);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { eventually } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// The work behind the requests in /metrics (docs/operations.md "Metrics"): a message sent is
// counted by its outcome, and an inbound webhook processed by the worker shows in the lag
// histogram, each exactly once.

const INTERNAL = 'internal-webhook-token-for-metrics';
let svc: TestService;
let owner: Session;
let account: string;

async function metric(name: string, labels = ''): Promise<number> {
  const res = await fetch(`${svc.metricsUrl}/metrics`);
  expect(res.status).toBe(200);
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

beforeAll(async () => {
  svc = await startTestService({ METRICS_PORT: '0', INTERNAL_WEBHOOK_TOKEN: INTERNAL });
  owner = await signUp(svc, 'Metrics Jobs');
  await setPlan(svc, owner, 'starter');
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: owner.access_token,
    body: { provider: 'whatsapp', external_id: `1${process.pid}77`, access_token: 'EAAG-token' },
  });
  expect(r.status).toBe(201);
  account = r.json.id;
});
afterAll(() => svc?.stop());

describe('jobs in /metrics', () => {
  it('counts a message Meta took as one send, sent', async () => {
    const sent = await metric('svc_message_sends_total', '{outcome="sent"}');
    const r = await call(svc, 'POST', '/functions/v1/whatsapp-send-message', {
      token: owner.access_token,
      body: { to: '+14155550199', template: { name: 'welcome', language: 'en' } },
    });
    expect(r.status).toBe(201);
    expect(r.json.message.status).toBe('sent');
    expect(await metric('svc_message_sends_total', '{outcome="sent"}')).toBe(sent + 1);
    expect(await metric('svc_message_sends_total', '{outcome="failed"}')).toBe(0);
  });

  it('observes the lag of a webhook event from its receipt to its processing', async () => {
    const before = await metric('svc_webhook_processing_lag_seconds_count');
    const received = Date.now();
    const res = await fetch(`${svc.url}/functions/v1/internal-webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${INTERNAL}` },
      body: JSON.stringify({
        organization_id: orgOf(owner),
        type: 'message.inbound',
        data: { channel: 'whatsapp', account_id: account, from: '14155550123', text: 'Hello' },
      }),
    });
    expect(res.status).toBeLessThan(300);
    const count = await eventually(async () => {
      const n = await metric('svc_webhook_processing_lag_seconds_count');
      return n > before ? n : undefined;
    });
    expect(count).toBe(before + 1);
    const [event] = await svc.services.db.query<{ status: string }>(
      'select status from app.webhook_events where organization_id = $1',
      [orgOf(owner)],
    );
    expect(event?.status).toBe('processed');
    const sum = await metric('svc_webhook_processing_lag_seconds_sum');
    expect(sum).toBeGreaterThanOrEqual(0);
    expect(sum).toBeLessThanOrEqual((Date.now() - received) / 1000);
  });
});

import { expect } from 'vitest';
import { type FakeStripe, startFakeStripe } from '../../src/dev/fake-stripe/server.ts';
import { call, orgOf, type Session } from './http.ts';
import { startTestService, type TestService } from './service.ts';

export const STRIPE_KEY = 'sk_test_billing_tests';
export const WEBHOOK_SECRET = 'whsec_billing_tests';

/** The settings that turn billing on against `fake`, with the fake's default price ids. */
export const billingEnv = (fake: FakeStripe, extra: Record<string, string> = {}) => ({
  STRIPE_SECRET_KEY: STRIPE_KEY,
  STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
  STRIPE_PRICE_STARTER: 'price_starter',
  STRIPE_PRICE_GROWTH: 'price_growth',
  STRIPE_PRICE_SCALE: 'price_scale',
  STRIPE_PRICE_AGENT_STARTER: 'price_agent_starter',
  STRIPE_PRICE_AGENT_GROWTH: 'price_agent_growth',
  STRIPE_PRICE_AGENT_SCALE: 'price_agent_scale',
  STRIPE_API_URL: fake.url,
  // Jobs are picked up fast, and a failed payment's grace is short.
  WORKER_POLL_MS: '500',
  BILLING_GRACE_SECONDS: '2',
  ...extra,
});

/** The fake Stripe, then the service pointed at it, then the fake's events pointed at the service. */
export async function startBilledService(
  extra: Record<string, string> = {},
  start: (env: Record<string, string>) => Promise<TestService> = startTestService,
) {
  const fake = await startFakeStripe({ secretKey: STRIPE_KEY, webhookSecret: WEBHOOK_SECRET });
  const svc = await start(billingEnv(fake, extra));
  fake.webhookUrl = `${svc.url}/functions/v1/stripe-webhook`;
  return {
    svc,
    fake,
    async stop() {
      await fake.settled();
      await svc.stop();
      await fake.close();
    },
  };
}

/** The organization's plan as its owner reads it. */
export async function planOf(svc: TestService, owner: Session): Promise<string> {
  const r = await call(svc, 'GET', '/functions/v1/billing', { token: owner.access_token });
  if (r.status !== 200) throw new Error(`billing failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.plan;
}

/** Runs a hosted page's button as a browser would (form post, no redirect followed). */
export async function press(fake: FakeStripe, path: string, form: Record<string, string> = {}) {
  const res = await fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  return { status: res.status, location: res.headers.get('location') };
}

/** The owner's checkout for `plan`, paid on the fake's page; returns the subscription's id. */
export async function subscribe(svc: TestService, fake: FakeStripe, owner: Session, plan: string) {
  const started = await call(svc, 'POST', '/functions/v1/billing-checkout', {
    token: owner.access_token,
    body: { plan },
  });
  if (started.status !== 200)
    throw new Error(`checkout failed: ${started.status} ${JSON.stringify(started.json)}`);
  const sessionId = new URL(started.json.url).pathname.split('/').pop() as string;
  await press(fake, `/c/pay/${sessionId}/pay`);
  const session = fake.checkoutSessions.get(sessionId);
  if (!session?.subscription) throw new Error('the fake made no subscription');
  expect(session.client_reference_id).toBe(orgOf(owner));
  return session.subscription;
}

// Plans are paid for (issue 27, docs/billing.md): with billing configured, an owner's plan changes
// only when Stripe's signed event says the subscription is paid, never on a redirect, a forged or
// replayed event, or an older state arriving late; a failed payment keeps the plan for the grace
// period, then falls back to free without deleting anything. Against the fake Stripe
// (src/dev/fake-stripe), through the official SDK, over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeStripe } from '../../src/dev/fake-stripe/server.ts';
import { stripeSignature } from '../../src/dev/fake-stripe/signature.ts';
import {
  planOf,
  press,
  STRIPE_KEY,
  startBilledService,
  subscribe,
  WEBHOOK_SECRET,
} from '../helpers/billing.ts';
import { call, inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken } from '../helpers/mcp.ts';
import type { TestService } from '../helpers/service.ts';

let svc: TestService;
let fake: FakeStripe;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, fake, stop } = await startBilledService());
});
afterAll(() => stop?.());

const fn = (name: string) => `/functions/v1/${name}`;
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 100 });
const storedEvents = async (id: string) =>
  (
    await svc.services.db.query<{ n: number }>(
      'select count(*)::int as n from app.stripe_events where id = $1',
      [id],
    )
  )[0]?.n;

/** Delivers the held events in the given order (each signed now, as Stripe would). */
async function deliver(events: { id: string }[]) {
  for (const e of events) {
    const event = fake.events.find((x) => x.id === e.id);
    if (!event) throw new Error(`no event ${e.id}`);
    expect(await fake.deliver(event)).toBe(200);
  }
}

describe('checkout', () => {
  it('changes the plan only once Stripe’s signed event arrives, not on the redirect back', async () => {
    const owner = await signUp(svc, 'Checkout Co');
    fake.hold = true;
    try {
      const started = await call(svc, 'POST', fn('billing-checkout'), {
        token: owner.access_token,
        body: { plan: 'growth' },
      });
      expect(started.status).toBe(200);
      expect(started.json.url.startsWith(`${fake.url}/c/pay/`)).toBe(true);
      const sessionId = new URL(started.json.url).pathname.split('/').pop() as string;
      const session = fake.checkoutSessions.get(sessionId);
      expect(session).toMatchObject({ mode: 'subscription', client_reference_id: orgOf(owner) });
      expect(session?.line_items).toEqual([{ price: 'price_growth', quantity: 1 }]);

      const page = await fetch(started.json.url);
      expect(await page.text()).toContain('Pay and subscribe');
      const paid = await press(fake, `/c/pay/${sessionId}/pay`);
      expect(paid.status).toBe(303);
      expect(paid.location).toBe(`${svc.url}/app?billing=success`);
      // Back on the dashboard, no event yet: still free.
      const back = await fetch(paid.location as string);
      expect(back.status).toBe(200);
      expect(await planOf(svc, owner)).toBe('free');

      await deliver(fake.held.splice(0));
      await until(() => planOf(svc, owner)).toBe('growth');
      const billing = await call(svc, 'GET', fn('billing'), { token: owner.access_token });
      expect(billing.json).toMatchObject({
        billing_enabled: true,
        plan: 'growth',
        subscription: { status: 'active', paid_plan: 'growth', additional_agents: 0, grace_until: null },
      });
      // The customer is reused: a second checkout is refused while the subscription lives.
      const again = await call(svc, 'POST', fn('billing-checkout'), {
        token: owner.access_token,
        body: { plan: 'scale' },
      });
      expect(again.status).toBe(409);
      expect(again.json.error).toBe('already_subscribed');
      expect(
        [...fake.customers.values()].filter((c) => c.metadata.organization_id === orgOf(owner)),
      ).toHaveLength(1);
    } finally {
      fake.hold = false;
    }
  });

  it('changes nothing when the person cancels on the checkout page', async () => {
    const owner = await signUp(svc, 'Changed Mind Co');
    const started = await call(svc, 'POST', fn('billing-checkout'), {
      token: owner.access_token,
      body: { plan: 'starter' },
    });
    const sessionId = new URL(started.json.url).pathname.split('/').pop() as string;
    const cancelled = await press(fake, `/c/pay/${sessionId}/cancel`);
    expect(cancelled.location).toBe(`${svc.url}/app?billing=cancelled`);
    expect(await planOf(svc, owner)).toBe('free');
  });

  it('is for owners only, and for paid plans', async () => {
    const owner = await signUp(svc, 'Owners Pay Co');
    const admin = await inviteAndAccept(svc, owner, await signUp(svc), 'admin');
    const member = await inviteAndAccept(svc, owner, await signUp(svc), 'member');
    for (const token of [admin, member]) {
      for (const name of ['billing-checkout', 'billing-portal']) {
        const refused = await call(svc, 'POST', fn(name), { token, body: { plan: 'scale' } });
        expect(refused.status).toBe(403);
        expect(refused.json.error).toBe('forbidden');
      }
    }
    const agent = await agentToken(svc, owner, ['read']);
    expect(
      (await call(svc, 'POST', fn('billing-checkout'), { token: agent.token, body: { plan: 'scale' } }))
        .status,
    ).toBe(403);
    const free = await call(svc, 'POST', fn('billing-checkout'), {
      token: owner.access_token,
      body: { plan: 'free' },
    });
    expect(free.status).toBe(400);
    const junk = await call(svc, 'POST', fn('billing-checkout'), {
      token: owner.access_token,
      body: { plan: 7 },
    });
    expect(junk.status).toBe(400);
    // No subscription yet: nothing to manage.
    const portal = await call(svc, 'POST', fn('billing-portal'), { token: owner.access_token });
    expect(portal.status).toBe(409);
    // And owners still cannot set a plan by hand.
    const byHand = await call(svc, 'POST', fn('organization-plan'), {
      token: owner.access_token,
      body: { organization_id: orgOf(owner), plan: 'scale' },
    });
    expect(byHand.status).toBe(403);
    expect(await planOf(svc, owner)).toBe('free');
  });
});

describe('the webhook', () => {
  /** A real event of the fake's, about a real paid subscription of `owner`'s organization. */
  async function heldCheckout(owner: Session) {
    fake.hold = true;
    try {
      await subscribe(svc, fake, owner, 'scale');
      return fake.held.splice(0);
    } finally {
      fake.hold = false;
    }
  }
  const post = (body: string, signature: string | undefined) =>
    fetch(`${svc.url}${fn('stripe-webhook')}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(signature ? { 'stripe-signature': signature } : {}),
      },
      body,
    });

  it('refuses forged, unsigned, stale and tampered deliveries, and they change nothing', async () => {
    const owner = await signUp(svc, 'Forged Co');
    const events = await heldCheckout(owner);
    const completed = events.find((e) => e.type === 'checkout.session.completed');
    if (!completed) throw new Error('no checkout.session.completed');
    const body = JSON.stringify(completed);
    const t = Math.floor(Date.now() / 1000);
    const attempts = [
      post(body, undefined),
      post(body, stripeSignature(body, 'whsec_someone_else', t)),
      post(body, stripeSignature(body, STRIPE_KEY, t)),
      // Captured an hour ago and sent again: outside the 5-minute tolerance.
      post(body, stripeSignature(body, WEBHOOK_SECRET, t - 3600)),
      // Signed, then the body changed.
      post(body.replace('"scale"', '"growth"'), stripeSignature(body, WEBHOOK_SECRET, t)),
      post(body, 't=abc,v1=00'),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(401);
      const answer = await res.json();
      expect(answer.error).toBe('unauthorized');
      expect(JSON.stringify(answer)).not.toMatch(/whsec|sk_test/);
    }
    expect(await storedEvents(completed.id)).toBe(0);
    expect(await planOf(svc, owner)).toBe('free');
    // The same bytes properly signed go through.
    expect((await post(body, stripeSignature(body, WEBHOOK_SECRET, t))).status).toBe(200);
    await until(() => planOf(svc, owner)).toBe('scale');
  });

  it('stores a replayed event once and acts on it once', async () => {
    const owner = await signUp(svc, 'Twice Co');
    const events = await heldCheckout(owner);
    await deliver(events);
    await deliver(events);
    for (const e of events) expect(await storedEvents(e.id)).toBe(1);
    await until(() => planOf(svc, owner)).toBe('scale');
  });

  it('never lets an older state win: events out of order end on the subscription’s last state', async () => {
    const owner = await signUp(svc, 'Out Of Order Co');
    const sub = await subscribe(svc, fake, owner, 'starter');
    await until(() => planOf(svc, owner)).toBe('starter');
    fake.hold = true;
    try {
      const portal = await call(svc, 'POST', fn('billing-portal'), { token: owner.access_token });
      expect(portal.status).toBe(200);
      const path = new URL(portal.json.url).pathname;
      await press(fake, `${path}/plan`, { price: 'price_growth' });
      await press(fake, `${path}/cancel`);
      const [upgraded, deleted] = fake.held.splice(0);
      expect([upgraded?.type, deleted?.type]).toEqual([
        'customer.subscription.updated',
        'customer.subscription.deleted',
      ]);
      // The cancellation arrives first, the upgrade (an older state) after it.
      await deliver([deleted as { id: string }]);
      await until(() => planOf(svc, owner)).toBe('free');
      await deliver([upgraded as { id: string }]);
      await until(async () => (await storedStatus(upgraded?.id as string)) ?? '').toBe('processed');
      expect(await planOf(svc, owner)).toBe('free');
      expect(fake.subscriptions.get(sub)?.status).toBe('canceled');
    } finally {
      fake.hold = false;
    }
  });
});

const storedStatus = async (id: string) =>
  (
    await svc.services.db.query<{ status: string }>('select status from app.stripe_events where id = $1', [
      id,
    ])
  )[0]?.status;

describe('a failed payment', () => {
  it('keeps the plan for the grace period, then falls back to free; nothing is deleted', async () => {
    const owner = await signUp(svc, 'Declined Co');
    const writer = await agentToken(svc, owner, ['write']);
    const sub = await subscribe(svc, fake, owner, 'starter');
    await until(() => planOf(svc, owner)).toBe('starter');
    // 60 contacts: more than the free plan's 50.
    const contacts = Array.from({ length: 60 }, (_, i) => ({ first_name: `Kept ${i}` }));
    expect(
      (await call(svc, 'POST', '/rest/v1/contacts', { token: owner.access_token, body: contacts })).status,
    ).toBe(201);
    const starterAgent = await call(svc, 'POST', fn('agent-auth'), { body: { api_key: writer.apiKey } });
    const agentJwt = starterAgent.json.access_token as string;

    await fake.failPayment(sub);
    await until(
      async () =>
        (await call(svc, 'GET', fn('billing'), { token: owner.access_token })).json.subscription.grace_until,
    ).not.toBeNull();
    // Within the grace period the plan holds...
    expect(await planOf(svc, owner)).toBe('starter');
    // ...and after it, the organization is on free.
    await until(() => planOf(svc, owner)).toBe('free');

    const read = await call(svc, 'GET', '/rest/v1/contacts?select=id&limit=100', {
      token: owner.access_token,
    });
    expect(read.json).toHaveLength(60);
    const refused = await call(svc, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      body: { first_name: 'One too many' },
    });
    expect(refused.status).toBe(403);
    expect(refused.json.error ?? refused.json.code).toBeDefined();
    expect(JSON.stringify(refused.json)).toContain('plan_limit_exceeded');
    // The agent's token from the starter days writes no more: free agents read only.
    const agentWrite = await call(svc, 'POST', '/rest/v1/inventory_items', {
      token: agentJwt,
      body: { sku: 'AFTER-DOWNGRADE', name: 'Should not exist' },
    });
    expect(agentWrite.status).toBe(403);
    expect((await call(svc, 'GET', '/rest/v1/contacts?select=id&limit=1', { token: agentJwt })).status).toBe(
      200,
    );

    // Paid at last: the plan comes back.
    await fake.payInvoice(sub);
    await until(() => planOf(svc, owner)).toBe('starter');
    const billing = await call(svc, 'GET', fn('billing'), { token: owner.access_token });
    expect(billing.json.subscription).toMatchObject({ status: 'active', grace_until: null });
  });

  it('a late payment_failed does not reopen a grace that invoice.paid closed', async () => {
    const owner = await signUp(svc, 'Late Failure Co');
    const sub = await subscribe(svc, fake, owner, 'growth');
    await until(() => planOf(svc, owner)).toBe('growth');
    fake.hold = true;
    try {
      await fake.failPayment(sub);
      await fake.payInvoice(sub);
      const held = fake.held.splice(0);
      const failed = held.find((e) => e.type === 'invoice.payment_failed');
      const paid = held.find((e) => e.type === 'invoice.paid');
      if (!failed || !paid) throw new Error('missing invoice events');
      failed.created = paid.created - 60; // the failure happened first, Stripe just sent it last
      await deliver([paid, failed]);
      await until(async () => (await storedStatus(failed.id)) ?? '').toBe('processed');
      const billing = await call(svc, 'GET', fn('billing'), { token: owner.access_token });
      expect(billing.json.subscription.grace_until).toBeNull();
      expect(await planOf(svc, owner)).toBe('growth');
    } finally {
      fake.hold = false;
    }
  });
});

describe('additional agents', () => {
  it('the quantity bought in the portal raises the agents ceiling', async () => {
    const owner = await signUp(svc, 'Many Agents Co');
    await subscribe(svc, fake, owner, 'starter');
    await until(() => planOf(svc, owner)).toBe('starter');
    // Starter includes 3 agents.
    for (let i = 0; i < 3; i++) await agentToken(svc, owner, ['read']);
    const over = await call(svc, 'POST', fn('agent-api-key-create'), {
      token: owner.access_token,
      body: { name: 'fourth', scopes: ['read'] },
    });
    expect(over.status).toBe(403);
    expect(over.json.error).toBe('plan_limit_exceeded');
    expect(over.json.details).toMatchObject({ additional_agent_usd: 10 });
    expect(over.json.message).toContain('10 USD a month');

    const portal = await call(svc, 'POST', fn('billing-portal'), { token: owner.access_token });
    await press(fake, `${new URL(portal.json.url).pathname}/agents`, { quantity: '1' });
    await until(
      async () =>
        (await call(svc, 'GET', fn('billing'), { token: owner.access_token })).json.subscription
          .additional_agents,
    ).toBe(1);
    const fourth = await call(svc, 'POST', fn('agent-api-key-create'), {
      token: owner.access_token,
      body: { name: 'fourth', scopes: ['read'] },
    });
    expect(fourth.status).toBe(201);
    // The owner's usage report counts the bought agent in the ceiling.
    const usage = await call(svc, 'GET', fn('agent-usage'), { token: owner.access_token });
    expect(usage.json.usage.agents).toMatchObject({ used: 4, limit: 4 });
  });
});

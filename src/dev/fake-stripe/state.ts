import { randomBytes } from 'node:crypto';

// The fake's objects, shaped as Stripe's API returns them (the fields the service reads, and the
// identifying ones every object has: id, object, livemode, created).

export type FakePrice = {
  id: string;
  object: 'price';
  nickname: string;
  unit_amount: number;
  currency: 'usd';
  recurring: { interval: 'month' };
  /** kind: a plan's price or one additional agent's; plan: the plan slug it belongs to. */
  metadata: { kind: 'plan' | 'agent'; plan: string };
};

export type FakeItem = {
  id: string;
  object: 'subscription_item';
  price: FakePrice;
  quantity: number;
  subscription: string;
  created: number;
};

export type FakeSubscription = {
  id: string;
  object: 'subscription';
  livemode: false;
  created: number;
  customer: string;
  status: 'active' | 'past_due' | 'canceled' | 'unpaid' | 'incomplete' | 'trialing';
  cancel_at_period_end: boolean;
  canceled_at: number | null;
  metadata: Record<string, string>;
  items: { object: 'list'; data: FakeItem[]; has_more: false; url: string };
  latest_invoice: string | null;
};

export type FakeCustomer = {
  id: string;
  object: 'customer';
  livemode: false;
  created: number;
  email: string | null;
  metadata: Record<string, string>;
};

export type FakeCheckoutSession = {
  id: string;
  object: 'checkout.session';
  livemode: false;
  created: number;
  mode: 'subscription';
  status: 'open' | 'complete' | 'expired';
  payment_status: 'unpaid' | 'paid';
  customer: string;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  subscription_data_metadata: Record<string, string>;
  line_items: { price: string; quantity: number }[];
  success_url: string;
  cancel_url: string;
  subscription: string | null;
  url: string;
};

export type FakePortalSession = {
  id: string;
  object: 'billing_portal.session';
  livemode: false;
  created: number;
  customer: string;
  return_url: string;
  url: string;
};

export type FakeEvent = {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  livemode: false;
  pending_webhooks: number;
  request: { id: null; idempotency_key: null };
  type: string;
  data: { object: unknown };
};

export const stripeId = (prefix: string) =>
  `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;

/** The six prices `svc dev fake-stripe` and the tests use, with the spec's amounts (cents a month). */
export function defaultPrices(): FakePrice[] {
  const price = (
    id: string,
    nickname: string,
    cents: number,
    kind: 'plan' | 'agent',
    plan: string,
  ): FakePrice => ({
    id,
    object: 'price',
    nickname,
    unit_amount: cents,
    currency: 'usd',
    recurring: { interval: 'month' },
    metadata: { kind, plan },
  });
  return [
    price('price_starter', 'Starter', 9900, 'plan', 'starter'),
    price('price_growth', 'Growth', 19900, 'plan', 'growth'),
    price('price_scale', 'Scale', 59900, 'plan', 'scale'),
    price('price_agent_starter', 'Additional agent (Starter)', 1000, 'agent', 'starter'),
    price('price_agent_growth', 'Additional agent (Growth)', 500, 'agent', 'growth'),
    price('price_agent_scale', 'Additional agent (Scale)', 500, 'agent', 'scale'),
  ];
}

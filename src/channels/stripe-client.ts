// Stripe through its official SDK (docs/billing.md): the client, built once per configuration,
// pointed at STRIPE_API_URL when set (`svc dev fake-stripe`), and the signed-event check.
// Stripe's answers are read into the plain shapes the billing domain needs; nothing here touches
// the database. The SDK (some 200 files) is loaded at its first use, not at start: a service
// without billing never loads it (docs/performance.md, issue 29).
import type Stripe from 'stripe';
import type { BillingConfig } from '../config.ts';
import { AppError } from '../platform/errors.ts';

export type StripeClient = Stripe;

const clients = new WeakMap<BillingConfig, Stripe>();

/** One SDK client per billing configuration (it keeps its own connection pool). */
export async function stripeClient(billing: BillingConfig): Promise<Stripe> {
  let client = clients.get(billing);
  if (!client) {
    const { default: Stripe } = await import('stripe');
    client =
      clients.get(billing) ??
      new Stripe(billing.secretKey, {
        ...(billing.api ?? {}),
        // A request waits at most this long; the SDK retries idempotent failures itself.
        timeout: 15_000,
        maxNetworkRetries: 2,
        appInfo: { name: 'svc-billing' },
      });
    clients.set(billing, client);
  }
  return client;
}

/** The subscription as billing reads it: which prices it holds in what quantity, and its status. */
export type SubscriptionState = {
  id: string;
  customer: string;
  status: string;
  /** price id → quantity */
  items: Record<string, { itemId: string; quantity: number }>;
  cancelAtPeriodEnd: boolean;
};

export function subscriptionState(s: Stripe.Subscription): SubscriptionState {
  const items: SubscriptionState['items'] = {};
  for (const item of s.items.data) items[item.price.id] = { itemId: item.id, quantity: item.quantity ?? 1 };
  return {
    id: s.id,
    customer: typeof s.customer === 'string' ? s.customer : s.customer.id,
    status: s.status,
    items,
    cancelAtPeriodEnd: s.cancel_at_period_end,
  };
}

/**
 * Runs a call to Stripe; Stripe's own refusal leaves as 502 provider_error with Stripe's code
 * (never its message, which may name our configuration), anything else as it is.
 */
export async function callStripe<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const e = err as { type?: string; code?: string; statusCode?: number };
    if (typeof e?.type === 'string' && e.type.startsWith('Stripe'))
      throw new AppError(502, 'provider_error', 'Stripe could not do this just now; try again in a moment', {
        provider: 'stripe',
        code: e.code ?? null,
        status: e.statusCode ?? null,
      });
    throw err;
  }
}

/**
 * The event of a Stripe-Signature'd body, verified by the SDK on the raw bytes: an HMAC-SHA256
 * of `t.payload` with the endpoint secret, compared in constant time, its timestamp within the
 * tolerance. Null when it does not verify (the caller answers as for any unsigned request).
 */
export async function verifiedEvent(billing: BillingConfig, raw: Uint8Array, header: string | undefined) {
  if (!header) return null;
  const client = await stripeClient(billing);
  try {
    return client.webhooks.constructEvent(
      Buffer.from(raw),
      header,
      billing.webhookSecret,
      billing.webhookToleranceSeconds,
    );
  } catch {
    return null;
  }
}

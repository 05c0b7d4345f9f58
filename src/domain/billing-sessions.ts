import { callStripe, stripeClient } from '../channels/stripe-client.ts';
import type { BillingConfig } from '../config.ts';
import type { Database } from '../platform/db/database.ts';
import { AppError, invalidField } from '../platform/errors.ts';
import { billingAccount } from './billing.ts';

// Where an owner is sent to pay or to manage billing: a Stripe Checkout session (subscription
// mode) or a Customer Portal session, both for the organization's one Stripe customer. Nothing
// here changes a plan: only Stripe's signed events do (src/jobs/process-stripe-event.ts). Stripe
// is called outside any database transaction.

const LIVE = ['active', 'trialing', 'past_due', 'unpaid', 'paused'];

/**
 * The organization's Stripe customer, created on its first checkout. Stripe's idempotency key
 * makes two racing first checkouts get one customer; the row keeps it for every later one.
 */
async function customerFor(
  db: Database,
  billing: BillingConfig,
  organizationId: string,
  email: string | null,
) {
  const known = await billingAccount(db, organizationId);
  if (known) return known;
  const customer = await callStripe(async () =>
    (await stripeClient(billing)).customers.create(
      { ...(email ? { email } : {}), metadata: { organization_id: organizationId } },
      { idempotencyKey: `svc-customer-${organizationId}` },
    ),
  );
  await db.query(
    `insert into app.billing_accounts (organization_id, customer_id) values ($1, $2)
     on conflict (organization_id) do nothing`,
    [organizationId, customer.id],
  );
  return (await billingAccount(db, organizationId)) as NonNullable<
    Awaited<ReturnType<typeof billingAccount>>
  >;
}

/** A Checkout session that subscribes the organization to `plan`; its URL. */
export async function startCheckout(
  db: Database,
  billing: BillingConfig,
  input: { organizationId: string; plan: string; email: string | null; returnUrl: string },
): Promise<string> {
  const price = billing.planPrices[input.plan];
  if (!price)
    throw invalidField(
      'plan',
      `Expected one of the paid plans: ${Object.keys(billing.planPrices).join(', ')}`,
      'Checkout is for a paid plan',
    );
  const account = await customerFor(db, billing, input.organizationId, input.email);
  if (account.subscription_id && LIVE.includes(account.subscription_status ?? ''))
    throw new AppError(
      409,
      'already_subscribed',
      'Your organization already has a subscription: change or cancel it under Manage billing.',
    );
  const session = await callStripe(async () =>
    (await stripeClient(billing)).checkout.sessions.create({
      mode: 'subscription',
      customer: account.customer_id,
      client_reference_id: input.organizationId,
      metadata: { organization_id: input.organizationId, plan: input.plan },
      subscription_data: { metadata: { organization_id: input.organizationId, plan: input.plan } },
      line_items: [{ price, quantity: 1 }],
      success_url: `${input.returnUrl}?billing=success`,
      cancel_url: `${input.returnUrl}?billing=cancelled`,
    }),
  );
  if (!session.url)
    throw new AppError(502, 'provider_error', 'Stripe gave no checkout page', { provider: 'stripe' });
  return session.url;
}

/** A Customer Portal session for the organization's customer; its URL. */
export async function startPortal(
  db: Database,
  billing: BillingConfig,
  input: { organizationId: string; returnUrl: string },
): Promise<string> {
  const account = await billingAccount(db, input.organizationId);
  if (!account)
    throw new AppError(
      409,
      'no_subscription',
      'Your organization has no billing account yet: choose a plan with Upgrade first.',
    );
  const session = await callStripe(async () =>
    (await stripeClient(billing)).billingPortal.sessions.create({
      customer: account.customer_id,
      return_url: `${input.returnUrl}?billing=returned`,
    }),
  );
  return session.url;
}

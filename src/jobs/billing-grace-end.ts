import {
  callStripe,
  type SubscriptionState,
  stripeClient,
  subscriptionState,
} from '../channels/stripe-client.ts';
import type { BillingConfig } from '../config.ts';
import { applySubscription, billingAccount, paidFor } from '../domain/billing.ts';
import type { JobDefinition } from '../platform/queue/queue.ts';
import type { JobDeps } from './deps.ts';
import { webhookPolicy } from './process-webhook-event.ts';

// The end of a failed payment's grace period (docs/billing.md "Failed payments"): enqueued for the
// moment it ends, it reads the subscription from Stripe once more. Paid meanwhile (active): the
// plan stays. Still past due (or ended): the organization falls back to free; nothing is deleted,
// and what is over the free plan's ceilings stays readable.

export const BILLING_GRACE_END = 'billing-grace-end';
export type GraceEndJob = { organization_id: string };

/**
 * Reads the subscription from Stripe (no transaction open meanwhile) and applies it, stamped with
 * the moment the read began: a read that began earlier than one applied already changes nothing.
 */
export async function syncSubscription(
  deps: Pick<JobDeps, 'db' | 'now' | 'log' | 'forgetPlan'>,
  billing: BillingConfig,
  organizationId: string,
  subscriptionId: string,
): Promise<void> {
  const readAt = deps.now();
  const sub = subscriptionState(
    await callStripe(async () => (await stripeClient(billing)).subscriptions.retrieve(subscriptionId)),
  );
  await addAgentsItem(billing, sub);
  const result = await deps.db.transaction((tx) =>
    applySubscription(tx, billing, organizationId, sub, readAt),
  );
  if (result.applied && result.plan && result.plan !== result.previousPlan) {
    deps.forgetPlan?.(organizationId);
    deps.log.info(
      { organization_id: organizationId, plan: result.plan, from: result.previousPlan, status: sub.status },
      'plan changed by billing',
    );
  }
}

/**
 * Stripe's Customer Portal changes the quantity of an item a subscription has, never adds one: a
 * live paid subscription gets its plan's per-agent item at quantity 0 (nothing billed), so the
 * owner can buy the first additional agent there. Idempotent: Stripe replays a repeated key.
 */
async function addAgentsItem(billing: BillingConfig, sub: SubscriptionState): Promise<void> {
  const { plan } = paidFor(billing, sub);
  const price = plan ? billing.agentPrices[plan] : undefined;
  if (!price || sub.items[price] || ['canceled', 'incomplete_expired'].includes(sub.status)) return;
  await callStripe(async () =>
    (await stripeClient(billing)).subscriptionItems.create(
      { subscription: sub.id, price, quantity: 0, proration_behavior: 'none' },
      { idempotencyKey: `agents-item/${sub.id}/${price}` },
    ),
  );
}

export function billingGraceEndJob(deps: JobDeps): JobDefinition<GraceEndJob> {
  return {
    name: BILLING_GRACE_END,
    slots: 1, // a few runs a day: one slot, polling rarely (JobDefinition.slots, rare)
    rare: true,
    policy: webhookPolicy(deps.config),
    async run(job) {
      const billing = deps.config.billing;
      if (!billing) return { status: 'done' };
      const account = await billingAccount(deps.db, job.data.organization_id);
      if (!account?.subscription_id || !account.grace_until) return { status: 'done' };
      // Woken early (clocks apart): the period is not over yet.
      if (account.grace_until > deps.now())
        return { status: 'retry', error: new Error('grace period not over') };
      await syncSubscription(deps, billing, account.organization_id, account.subscription_id);
      return { status: 'done' };
    },
  };
}

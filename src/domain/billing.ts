import type { BillingConfig } from '../config.ts';
import type { Principal, Queryable } from '../platform/db/database.ts';
import { AppError, forbidden } from '../platform/errors.ts';
import type { Deps } from './deps.ts';
import { requireCurrentOrg } from './organizations.ts';

// What an organization's subscription means for its plan (migrations/0031_billing.sql,
// docs/billing.md). The plan follows Stripe's subscription as read from Stripe, never a
// redirect or a caller's word; a state read earlier never replaces one read later.

export type BillingAccount = {
  organization_id: string;
  customer_id: string;
  subscription_id: string | null;
  subscription_status: string | null;
  paid_plan: string | null;
  extra_agents: number;
  synced_at: Date | null;
  grace_until: Date | null;
  invoice_event_at: Date | null;
};

const ACCOUNT_COLUMNS = `organization_id, customer_id, subscription_id, subscription_status, paid_plan,
  extra_agents, synced_at, grace_until, invoice_event_at`;

export async function billingAccount(q: Queryable, organizationId: string): Promise<BillingAccount | null> {
  const [row] = await q.query<BillingAccount>(
    `select ${ACCOUNT_COLUMNS} from app.billing_accounts where organization_id = $1`,
    [organizationId],
  );
  return row ?? null;
}

export async function accountByCustomer(q: Queryable, customerId: string): Promise<BillingAccount | null> {
  const [row] = await q.query<BillingAccount>(
    `select ${ACCOUNT_COLUMNS} from app.billing_accounts where customer_id = $1`,
    [customerId],
  );
  return row ?? null;
}

/** Billing is off (self-hosted): 409, saying who changes plans instead. */
export const billingNotConfigured = () =>
  new AppError(
    409,
    'billing_not_configured',
    'Billing is not set up on this service: plans are changed by its operator. Ask them to move your organization to another plan.',
  );

/**
 * The caller's current organization, when the caller is one of its owners: owners hold billing
 * (docs/decisions.md); admins and members are refused.
 */
export async function requireBillingOwner(deps: Pick<Deps, 'db'>, principal: Principal): Promise<string> {
  if (principal.kind !== 'user') throw forbidden('Only an owner of the organization manages its billing');
  return deps.db.asPrincipal(
    principal,
    async (tx) => {
      const org = await requireCurrentOrg(tx);
      const [row] = await tx.query<{ role: string | null }>('select app.org_role() as role');
      if (row?.role !== 'owner') throw forbidden('Only an owner of the organization manages its billing');
      return org;
    },
    { readOnly: true },
  );
}

/** The subscription's facts billing decides on (read from Stripe by src/channels/stripe-client.ts). */
export type Subscription = {
  id: string;
  customer: string;
  status: string;
  items: Record<string, { itemId: string; quantity: number }>;
};

/** The paid plan whose price the subscription holds, and the agents it pays for beyond the plan's. */
export function paidFor(
  billing: BillingConfig,
  sub: Subscription,
): { plan: string | null; extraAgents: number } {
  const plan =
    Object.keys(billing.planPrices).find((slug) => sub.items[billing.planPrices[slug] as string]) ?? null;
  const agentPrice = plan ? billing.agentPrices[plan] : undefined;
  return { plan, extraAgents: agentPrice ? (sub.items[agentPrice]?.quantity ?? 0) : 0 };
}

/**
 * The plan a subscription gives the organization now: its paid plan while active, trialing, or
 * past due within the grace period; free once canceled, unpaid, paused or past the grace period;
 * no change (null) while the first payment is incomplete.
 */
export function planFromSubscription(
  paid: string | null,
  status: string,
  graceUntil: Date | null,
  now: Date,
): string | null {
  if (status === 'incomplete') return null;
  if (!paid) return 'free';
  if (status === 'active' || status === 'trialing') return paid;
  if (status === 'past_due') return graceUntil && graceUntil <= now ? 'free' : paid;
  return 'free';
}

const ENDED = ['canceled', 'incomplete_expired'];

export type SyncResult = { applied: boolean; plan: string | null; previousPlan: string | null };

/**
 * Applies a subscription read from Stripe at `readAt` to the organization, unless a state read
 * later was applied already, or another subscription of the organization is still live (a second
 * checkout never takes the plan from the first while it runs). Returns the plan it set, if any.
 */
export async function applySubscription(
  tx: Queryable,
  billing: BillingConfig,
  organizationId: string,
  sub: Subscription,
  readAt: Date,
): Promise<SyncResult> {
  const [account] = await tx.query<BillingAccount & { plan: string }>(
    `select b.organization_id, b.customer_id, b.subscription_id, b.subscription_status, b.paid_plan,
            b.extra_agents, b.synced_at, b.grace_until, b.invoice_event_at, o.plan
       from app.billing_accounts b join public.organizations o on o.id = b.organization_id
      where b.organization_id = $1 for update of b, o`,
    [organizationId],
  );
  if (!account || account.customer_id !== sub.customer)
    throw new AppError(400, 'validation_error', 'The subscription is not this organization’s customer');
  const other = account.subscription_id && account.subscription_id !== sub.id;
  if (other && !ENDED.includes(account.subscription_status ?? '') && ENDED.includes(sub.status))
    return { applied: false, plan: null, previousPlan: account.plan };
  if (!other && account.synced_at && account.synced_at > readAt)
    return { applied: false, plan: null, previousPlan: account.plan };
  const { plan: paid, extraAgents } = paidFor(billing, sub);
  const live = !ENDED.includes(sub.status);
  // A failed payment's grace ends when the subscription is paid up again, or ends.
  const grace = sub.status === 'past_due' ? account.grace_until : null;
  await tx.query(
    `update app.billing_accounts
        set subscription_id = $2, subscription_status = $3, paid_plan = $4, extra_agents = $5,
            synced_at = $6, grace_until = $7
      where organization_id = $1`,
    [organizationId, sub.id, sub.status, live ? paid : null, live ? extraAgents : 0, readAt, grace],
  );
  const plan = planFromSubscription(paid, sub.status, grace, readAt);
  if (plan && plan !== account.plan)
    await tx.query('update public.organizations set plan = $2 where id = $1', [organizationId, plan]);
  return { applied: true, plan, previousPlan: account.plan };
}

/**
 * A payment event (invoice.payment_failed opens the grace period, invoice.paid closes it), unless
 * a later payment event was applied already. Returns the grace period's end, if one is open.
 */
export async function applyPaymentEvent(
  tx: Queryable,
  organizationId: string,
  kind: 'failed' | 'paid',
  eventCreated: Date,
  graceEnds: Date,
): Promise<Date | null> {
  const [row] = await tx.query<{ grace_until: Date | null }>(
    `update app.billing_accounts
        set grace_until = case when $2 = 'failed' then coalesce(grace_until, $4) else null end,
            invoice_event_at = $3
      where organization_id = $1 and (invoice_event_at is null or invoice_event_at <= $3)
      returning grace_until`,
    [organizationId, kind, eventCreated, graceEnds],
  );
  if (row) return row.grace_until;
  const account = await billingAccount(tx, organizationId);
  return account?.grace_until ?? null;
}

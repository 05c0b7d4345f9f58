import type { BillingConfig } from '../config.ts';
import { accountByCustomer, applyPaymentEvent } from '../domain/billing.ts';
import {
  markStripeEvent,
  PENDING_STRIPE_EVENTS,
  PROCESS_STRIPE_EVENT,
  type StripeEventJob,
  stripeEvent,
} from '../domain/billing-events.ts';
import type { JobDefinition, JobOutcome } from '../platform/queue/queue.ts';
import { BILLING_GRACE_END, type GraceEndJob, syncSubscription } from './billing-grace-end.ts';
import type { JobDeps } from './deps.ts';
import { webhookPolicy } from './process-webhook-event.ts';

// Processing one stored Stripe event (docs/billing.md "Events"). The event only says *which*
// subscription changed: its state is read from Stripe itself (outside any transaction) and applied
// unless a later read was applied already, so duplicates and events out of order cannot roll a
// plan back. Payment events are ordered by their own `created`. Endings: processed; ignored (a
// type this service does not act on, or a customer it does not know); pending + retry when
// Stripe cannot be reached.

type Obj = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
const idOf = (v: unknown) => str(v) ?? str((v as Obj | null)?.id);

/** The subscription an invoice is for (the API's `parent.subscription_details`, or the older field). */
const invoiceSubscription = (inv: Obj) =>
  idOf(
    (inv.parent as Obj | null)?.subscription_details &&
      ((inv.parent as Obj).subscription_details as Obj).subscription,
  ) ?? idOf(inv.subscription);

export async function processBillingEvent(
  deps: Pick<JobDeps, 'db' | 'queue' | 'now' | 'log' | 'forgetPlan'>,
  billing: BillingConfig,
  job: StripeEventJob,
): Promise<JobOutcome> {
  const ev = await stripeEvent(deps.db, job.event_id);
  if (ev?.status !== 'pending') return { status: 'done' };
  const obj = ((JSON.parse(ev.payload) as Obj).data as Obj | undefined)?.object as Obj | undefined;
  const customer = idOf(obj?.customer);
  const account = customer ? await accountByCustomer(deps.db, customer) : null;
  const ignore = async (why: string) => {
    await markStripeEvent(deps.db, ev.id, 'ignored', why);
    return { status: 'done' } as const;
  };
  if (!obj) return ignore('no object in the event');
  if (!account) return ignore('a customer this service did not create');
  const org = account.organization_id;
  try {
    switch (ev.type) {
      case 'checkout.session.completed': {
        // The session names the organization; it must be the one whose customer paid.
        const named = str(obj.client_reference_id) ?? str((obj.metadata as Obj | null)?.organization_id);
        if (named !== org) return ignore('the session names another organization than its customer’s');
        const sub = idOf(obj.subscription);
        if (!sub) return ignore('no subscription in the session');
        await syncSubscription(deps, billing, org, sub);
        break;
      }
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted': {
        const sub = idOf(obj.id);
        if (!sub) return ignore('no subscription id');
        await syncSubscription(deps, billing, org, sub);
        break;
      }
      case 'invoice.payment_failed':
      case 'invoice.paid': {
        const failed = ev.type === 'invoice.payment_failed';
        const graceEnds = new Date(deps.now().getTime() + billing.graceSeconds * 1000);
        const open = await deps.db.transaction(async (tx) => {
          const until = await applyPaymentEvent(tx, org, failed ? 'failed' : 'paid', ev.created, graceEnds);
          if (until) {
            const end: GraceEndJob = { organization_id: org };
            await deps.queue.enqueue(tx, BILLING_GRACE_END, end, {
              key: `${org}/${until.toISOString()}`,
              // A second late: the queue's clock counts whole seconds, and early is a wasted run.
              startAfter: new Date(until.getTime() + 1000),
            });
          }
          return until;
        });
        deps.log.info({ organization_id: org, grace_until: open }, `stripe ${ev.type}`);
        // Paid again: the subscription's state (active) puts the paid plan back if the grace had ended.
        const sub = invoiceSubscription(obj);
        if (!failed && sub) await syncSubscription(deps, billing, org, sub);
        break;
      }
      default:
        return ignore(`${ev.type} is not an event billing acts on`);
    }
    await markStripeEvent(deps.db, ev.id, 'processed', null);
    return { status: 'done' };
  } catch (err) {
    await markStripeEvent(deps.db, ev.id, 'pending', (err as Error).message ?? String(err));
    return { status: 'retry', error: err };
  }
}

export function processBillingEventJob(deps: JobDeps): JobDefinition<StripeEventJob> {
  return {
    name: PROCESS_STRIPE_EVENT,
    policy: webhookPolicy(deps.config),
    slots: 1, // a subscription's events, a few a month: one slot polls (JobDefinition.slots)
    run: async (job) => {
      const billing = deps.config.billing;
      // Billing turned off after the event was stored: it waits for billing to be configured again.
      if (!billing) return { status: 'retry', error: new Error('billing is not configured') };
      return processBillingEvent(deps, billing, job.data);
    },
    async onFailed(job, failure) {
      await markStripeEvent(
        deps.db,
        job.data.event_id,
        'failed',
        String((failure.error as Error)?.message ?? failure.error),
      );
    },
    unsettled: PENDING_STRIPE_EVENTS,
  };
}

import { asMetaDelivery, metaEvents } from '../channels/meta-webhook.ts';
import { isShopifyOrderTopic, readShopifyOrder } from '../channels/shopify-order.ts';
import type { Config } from '../config.ts';
import { applyInbound, settlesAtOnce } from '../domain/inbound-messages.ts';
import { applyOrderStatusEvent } from '../domain/internal-order-status.ts';
import { internalEvents, parseInternal } from '../domain/internal-webhook.ts';
import { importShopifyOrder } from '../domain/shopify-orders.ts';
import {
  commitWithoutFlush,
  lockEvent,
  markEvent,
  PENDING_EVENTS,
  PROCESS_WEBHOOK_EVENT,
  type ProcessWebhookJob,
  type WebhookEvent,
} from '../domain/webhook-events.ts';
import type { Queryable } from '../platform/db/database.ts';
import { AppError, type PgError } from '../platform/errors.ts';
import type { JobDefinition, JobOutcome, JobPolicy } from '../platform/queue/queue.ts';
import { JobLost } from '../platform/queue/sweep.ts';
import type { JobDeps } from './deps.ts';

// Processing one stored webhook event (docs/webhooks.md): its entries for its account become
// messages and status changes in one transaction, on the service path. Endings:
// - processed (or ignored: nothing in it this service handles);
// - pending + retry: a status names a message whose send has not recorded Meta's id yet (its
//   answer may still be on the way), or anything transient; after the policy's last attempt the
//   event is `failed` with its last error;
// - failed at once: a domain rule refuses it (an invalid identity, a disconnected account);
// - rejected, not retried: the organization is at a plan ceiling (SV403 from a trigger). The
//   event waits, whole, for `svc webhooks replay` after an upgrade.

/** Retries for minutes to hours: long enough for a send's answer, short of Meta's patience. */
export const webhookPolicy = (config: Config): JobPolicy => ({
  attempts: config.webhookRetry.attempts,
  backoffSeconds: config.webhookRetry.backoffSeconds,
  maxBackoffSeconds: 1800,
  maxAgeSeconds: 7 * 86400,
  leaseSeconds: config.webhookRetry.leaseSeconds,
});

const isCeiling = (e: unknown) => (e as PgError).code === 'SV403';
/** A rule of the database's own (SV400 validation, SV409 transition or lock), not a passing fault. */
const isRefusal = (e: unknown) => /^SV4\d\d$/.test((e as PgError).code ?? '');
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * One run over the event; what the queue should do next. `pending`: called with the event when
 * this run finds it pending (the job's run measures the lag from its `received_at`).
 */
export async function processWebhookEvent(
  deps: Pick<JobDeps, 'db'>,
  job: ProcessWebhookJob,
  pending?: (ev: WebhookEvent) => void,
): Promise<JobOutcome> {
  try {
    return await deps.db.transaction(async (tx): Promise<JobOutcome> => {
      const [, ev] = await Promise.all([commitWithoutFlush(tx), lockEvent(tx, job)]);
      // Purged, or settled by an earlier run whose lease ran out: nothing to do.
      if (ev?.status !== 'pending') return { status: 'done' };
      pending?.(ev);
      if (ev.provider === 'shopify') return await importShopify(tx, job, ev);
      if (ev.provider === 'internal') {
        const internal = parseInternal(ev.payload);
        if (internal?.type === 'order.status') {
          await applyOrderStatusEvent(tx, ev.organization_id, internal.data);
          await markEvent(tx, job, 'processed', null);
          return { status: 'done' };
        }
      }
      const delivery = ev.provider === 'meta' ? asMetaDelivery(JSON.parse(ev.payload)) : null;
      const events =
        delivery && ev.account_external_id
          ? metaEvents(delivery, ev.account_external_id)
          : ev.provider === 'internal'
            ? (internalEvents(ev.payload) ?? [])
            : [];
      if (!events.length || !ev.account_id) {
        await markEvent(tx, job, 'ignored', null);
        return { status: 'done' };
      }
      if (settlesAtOnce(events)) {
        // The ending is known before the answers: recorded first, in the same round trip, so the
        // conversation rows the messages update stay locked only until the commit.
        await Promise.all([
          markEvent(tx, job, 'processed', null),
          applyInbound(tx, ev.organization_id, ev.account_id, events),
        ]);
        return { status: 'done' };
      }
      const applied = await applyInbound(tx, ev.organization_id, ev.account_id, events);
      if (applied.unmatched.length) {
        // What did apply is kept (it is idempotent); the run after the backoff tries the rest.
        const error = `no such message: ${applied.unmatched.join(', ')}`;
        await markEvent(tx, job, 'pending', error);
        return { status: 'retry', error: new Error(error) };
      }
      await markEvent(tx, job, 'processed', null);
      return { status: 'done' };
    });
  } catch (err) {
    if (isCeiling(err)) {
      await markEvent(deps.db, job, 'rejected', messageOf(err));
      return { status: 'done' };
    }
    // Refused by a domain rule (an identity that is no phone number, a disconnected account, an
    // order over the line limit): retrying cannot help; the event is failed at once and can be
    // replayed once that changes.
    if ((err instanceof AppError && err.status < 500) || isRefusal(err)) {
      await markEvent(deps.db, job, 'failed', messageOf(err));
      return { status: 'done' };
    }
    await markEvent(deps.db, job, 'pending', messageOf(err));
    return { status: 'retry', error: err };
  }
}

/** A Shopify event: an order topic imports the order; other topics are kept and ignored. */
async function importShopify(tx: Queryable, job: ProcessWebhookJob, ev: WebhookEvent): Promise<JobOutcome> {
  const read = isShopifyOrderTopic(ev.topic) ? readShopifyOrder(ev.payload) : null;
  if (!read) {
    await markEvent(tx, job, 'ignored', null);
    return { status: 'done' };
  }
  if ('problems' in read) {
    await markEvent(tx, job, 'failed', `not a Shopify order: ${read.problems.join('; ')}`);
    return { status: 'done' };
  }
  const imported = await importShopifyOrder(tx, ev.organization_id, read.order, ev.topic);
  if (imported.outcome === 'stale')
    await markEvent(
      tx,
      job,
      'ignored',
      `older than the Shopify update already applied (${imported.applied_at})`,
    );
  else await markEvent(tx, job, 'processed', null);
  return { status: 'done' };
}

export function processWebhookEventJob(deps: JobDeps): JobDefinition<ProcessWebhookJob> {
  const lag = deps.metrics?.webhookLag;
  return {
    name: PROCESS_WEBHOOK_EVENT,
    policy: webhookPolicy(deps.config),
    async run(job) {
      let received: Date | undefined;
      const outcome = await processWebhookEvent(deps, job.data, (ev) => {
        received = ev.received_at;
      });
      // Settled (processed, ignored, failed or rejected) by this run: the time since the receipt
      // committed (a Meta delivery's inbox row: its routing, and the job, came later).
      if (outcome.status === 'done' && received)
        lag?.observe((Date.now() - new Date(received).getTime()) / 1000);
      return outcome;
    },
    async onFailed(job, failure) {
      const [row] = await deps.db.query<{ last_error: string | null }>(
        'select last_error from app.webhook_events where organization_id = $1 and id = $2',
        [job.data.organization_id, job.data.event_id],
      );
      const last = row?.last_error ?? null;
      // The sweep's reason (runs cut off, a crash, the job gone) leads; a run's own error follows.
      const error =
        failure.error instanceof JobLost
          ? `${failure.error.message}${last ? ` (last error: ${last})` : ''}`
          : (last ?? messageOf(failure.error));
      await markEvent(deps.db, job.data, 'failed', error, { run: false });
    },
    unsettled: PENDING_EVENTS,
  };
}

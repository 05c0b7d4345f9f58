import type { Database, Principal, Queryable } from '../platform/db/database.ts';
import { AppError, forbidden, notFound } from '../platform/errors.ts';
import type { Queue } from '../platform/queue/queue.ts';
import { requireCurrentOrg, requireOrgAdmin } from './organizations.ts';

// The inbound webhook inbox (migrations/0018_webhook_events.sql, docs/webhooks.md). Takes a
// verified delivery and the accounts it was routed to; stores the raw body once per delivery id
// and one event per account, each with its processing job, in one transaction. Gives the worker
// its event back and records how processing ended; replays events that failed or were rejected.

export const PROCESS_WEBHOOK_EVENT = 'process-webhook-event';
export type ProcessWebhookJob = { organization_id: string; event_id: string };

/** The key an event's job is enqueued with (one job per event): `EVENT_JOB` builds the same. */
export const eventKey = (job: ProcessWebhookJob) => `${job.organization_id}/${job.event_id}`;

/** An event `e`'s job as SQL: its key (`eventKey`) and data, for the sweep and the receipt alike. */
export const EVENT_JOB = `e.organization_id::text || '/' || e.id::text as key,
    jsonb_build_object('organization_id', e.organization_id, 'event_id', e.id) as data`;

/** Events still pending, for the sweep (JobDefinition.unsettled; webhook_events_status_idx). */
export const PENDING_EVENTS = `select ${EVENT_JOB}, e.received_at as since
  from app.webhook_events e
 where e.status = 'pending'`;

export type WebhookEventStatus = 'pending' | 'processed' | 'failed' | 'rejected' | 'ignored';

export type StoredDelivery = {
  provider: 'meta' | 'shopify' | 'internal';
  deliveryId: string;
  topic: string;
  payload: string;
  /** `id` null: an internal event for the organization, not for an account. */
  accounts: { organization_id: string; id: string | null }[];
};

/**
 * Stores a delivery and its events and enqueues their jobs, all or nothing. A delivery already
 * stored (same provider and delivery id) stores nothing and enqueues nothing: `duplicate`.
 */
export async function storeDelivery(
  db: Database,
  queue: Queue,
  d: StoredDelivery,
): Promise<{ duplicate: boolean; events: string[] }> {
  return db.transaction(async (tx) => {
    const [delivery] = await tx.query<{ id: string }>(
      `insert into app.webhook_deliveries (provider, delivery_id, payload) values ($1, $2, $3)
       on conflict (provider, delivery_id) do nothing returning id`,
      [d.provider, d.deliveryId, d.payload],
    );
    if (!delivery) return { duplicate: true, events: [] };
    const events: string[] = [];
    for (const account of d.accounts) {
      const [event] = await tx.query<{ id: string }>(
        `insert into app.webhook_events (organization_id, delivery, provider, account_id, delivery_id, topic)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (organization_id, provider, delivery_id, account_id) do nothing returning id`,
        [account.organization_id, delivery.id, d.provider, account.id, d.deliveryId, d.topic],
      );
      if (!event) continue;
      const job: ProcessWebhookJob = { organization_id: account.organization_id, event_id: event.id };
      await queue.enqueue(tx, PROCESS_WEBHOOK_EVENT, job, { key: eventKey(job), owner: true });
      events.push(event.id);
    }
    return { duplicate: false, events };
  });
}

export type WebhookEvent = {
  organization_id: string;
  id: string;
  provider: string;
  account_id: string | null;
  account_provider: string | null;
  account_external_id: string | null;
  topic: string;
  status: WebhookEventStatus;
  attempts: number;
  payload: string;
  /** When its delivery's receipt committed (the inbox row's time, for a Meta delivery). */
  received_at: Date;
};

/**
 * A processing transaction's commit need not wait for the WAL flush (synchronous_commit off, this
 * transaction only): the raw delivery is already durable, processing is idempotent, and the job's
 * completion, committed after it with the flush, makes it durable too (the WAL is flushed in
 * order). A crash in between loses both: the job's lease runs out and the event, pending again,
 * is processed again (docs/decisions.md, "Processing commits without waiting for the flush").
 */
export async function commitWithoutFlush(tx: Queryable): Promise<void> {
  await tx.query("select set_config('synchronous_commit', 'off', true)");
}

/** An event with its raw payload and its account's identity, locked for this transaction. */
export async function lockEvent(tx: Queryable, job: ProcessWebhookJob): Promise<WebhookEvent | null> {
  const [row] = await tx.query<WebhookEvent>(
    `select e.organization_id, e.id, e.provider, e.account_id, e.topic, e.status, e.attempts, d.payload,
            e.received_at,
            a.provider as account_provider, a.external_id as account_external_id
       from app.webhook_events e
       join app.webhook_deliveries d on d.id = e.delivery
       left join app.connected_accounts a on a.organization_id = e.organization_id and a.id = e.account_id
      where e.organization_id = $1 and e.id = $2
        for update of e`,
    [job.organization_id, job.event_id],
  );
  return row ?? null;
}

/**
 * Records one processing run's ending. `pending` keeps it waiting for the job's next run.
 * `run: false`: an ending decided outside a run (its job gave up), which applies only to an event
 * still pending, so it never overwrites what a run recorded meanwhile.
 */
export async function markEvent(
  q: Queryable,
  job: ProcessWebhookJob,
  status: WebhookEventStatus,
  lastError: string | null,
  { run = true }: { run?: boolean } = {},
): Promise<void> {
  await q.query(
    `update app.webhook_events e
        set status = $3, attempts = e.attempts + $5, last_error = left($4, 2000),
            processed_at = case when $3 in ('processed', 'ignored') then now() else e.processed_at end
      where e.organization_id = $1 and e.id = $2 and ($5 = 1 or e.status = 'pending')`,
    [job.organization_id, job.event_id, status, lastError, run ? 1 : 0],
  );
}

/**
 * Puts events back to `pending` and enqueues them again: one by id (whatever its status but
 * pending), or with `failed` every `failed` and `rejected` one (rejected events waited for a plan
 * upgrade; failed ones for a fix). Returns the ids replayed.
 */
export async function replayEvents(
  db: Database,
  queue: Queue,
  which: { id: string; organization_id?: string; statuses?: WebhookEventStatus[] } | { failed: true },
): Promise<string[]> {
  return db.transaction(async (tx) => {
    const rows =
      'id' in which
        ? await tx.query<{ organization_id: string; id: string }>(
            `update app.webhook_events e set status = 'pending', last_error = null
              where e.id = $1::uuid and e.status <> 'pending'
                and ($2::uuid is null or e.organization_id = $2::uuid)
                and ($3::text[] is null or e.status = any($3::text[]))
              returning e.organization_id, e.id`,
            [which.id, which.organization_id ?? null, which.statuses ?? null],
          )
        : await tx.query<{ organization_id: string; id: string }>(
            `update app.webhook_events e set status = 'pending', last_error = null
              where e.status in ('failed', 'rejected') returning e.organization_id, e.id`,
          );
    for (const r of rows) {
      const job: ProcessWebhookJob = { organization_id: r.organization_id, event_id: r.id };
      // The event's one job runs again (its earlier run finished); a run still going keeps its job,
      // and if it ends leaving the event pending, the sweep enqueues it again.
      await queue.enqueue(tx, PROCESS_WEBHOOK_EVENT, job, { key: eventKey(job), rerun: true });
    }
    return rows.map((r) => r.id);
  });
}

/** What owners and admins see of an event: never the payload. */
export type WebhookEventSummary = {
  id: string;
  provider: string;
  topic: string;
  account_id: string | null;
  status: WebhookEventStatus;
  attempts: number;
  last_error: string | null;
  received_at: Date;
  processed_at: Date | null;
};

const SUMMARY_COLUMNS = `e.id, e.provider, e.topic, e.account_id, e.status, e.attempts, e.last_error,
  e.received_at, e.processed_at`;

/** The current organization's events, newest first (owners and admins; row-level security agrees). */
export async function listWebhookEvents(
  deps: { db: Database },
  principal: Principal,
  filter: { status?: WebhookEventStatus },
  page: { limit: number; offset: number },
): Promise<{ events: WebhookEventSummary[]; total: number }> {
  return deps.db.asPrincipal(
    principal,
    async (tx) => {
      await requireCurrentOrg(tx);
      await requireOrgAdmin(tx, 'Only owners and admins may see webhook events');
      const status = filter.status ?? null;
      const [count] = await tx.query<{ n: number }>(
        `select count(*)::int as n from app.webhook_events e
          where e.organization_id = app.current_org_id() and ($1::text is null or e.status = $1::text)`,
        [status],
      );
      const events = await tx.query<WebhookEventSummary>(
        `select ${SUMMARY_COLUMNS} from app.webhook_events e
          where e.organization_id = app.current_org_id() and ($1::text is null or e.status = $1::text)
          order by e.received_at desc, e.id desc limit $2 offset $3`,
        [status, page.limit, page.offset],
      );
      return { events, total: count?.n ?? 0 };
    },
    { readOnly: true },
  );
}

const REPLAYABLE: WebhookEventStatus[] = ['failed', 'rejected'];

const notReplayable = (status: string) =>
  new AppError(
    409,
    'not_replayable',
    `Only a failed or rejected event can be replayed; this one is ${status}`,
    {
      status,
    },
  );

/**
 * Puts one failed or rejected event of the current organization back to pending and enqueues its
 * job (owners only). Another tenant's id looks missing (404); any other status is 409.
 */
export async function replayWebhookEvent(
  deps: { db: Database; queue: Queue },
  principal: Principal,
  id: string,
): Promise<WebhookEventSummary> {
  const org = await deps.db.asPrincipal(
    principal,
    async (tx) => {
      const org = await requireCurrentOrg(tx);
      const [role] = await tx.query<{ r: string | null }>('select app.org_role() as r');
      if (role?.r !== 'owner') throw forbidden('Only owners may replay webhook events');
      const [event] = await tx.query<{ status: string }>(
        'select e.status from app.webhook_events e where e.organization_id = app.current_org_id() and e.id = $1',
        [id],
      );
      if (!event) throw notFound('webhook event');
      if (!REPLAYABLE.includes(event.status as WebhookEventStatus)) throw notReplayable(event.status);
      return org;
    },
    { readOnly: true },
  );
  const replayed = await replayEvents(deps.db, deps.queue, {
    id,
    organization_id: org,
    statuses: REPLAYABLE,
  });
  const [event] = await deps.db.query<WebhookEventSummary>(
    `select ${SUMMARY_COLUMNS} from app.webhook_events e where e.organization_id = $1 and e.id = $2`,
    [org, id],
  );
  if (!event) throw notFound('webhook event');
  // Another replay (or the worker) got there between the check and the update.
  if (replayed.length === 0) throw notReplayable(event.status);
  return event;
}

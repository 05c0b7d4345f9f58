import type { Database, Queryable } from '../platform/db/database.ts';
import type { Queue } from '../platform/queue/queue.ts';

// Stripe's signed events, stored once by their id (app.stripe_events, migrations/0031_billing.sql)
// and processed by the worker (src/jobs/process-stripe-event.ts). Stripe sends an event again
// until it gets a 2xx, and may send it twice anyway: the second copy stores and enqueues nothing.

export const PROCESS_STRIPE_EVENT = 'process-stripe-event';
export type StripeEventJob = { event_id: string };

/** Events still pending, for the sweep (JobDefinition.unsettled). */
export const PENDING_STRIPE_EVENTS = `select e.id as key, jsonb_build_object('event_id', e.id) as data,
    e.received_at as since
  from app.stripe_events e
 where e.status = 'pending'`;

export type StripeEventStatus = 'pending' | 'processed' | 'ignored' | 'failed';

/** Stores a verified event and its job, once per event id; `duplicate` when it was stored before. */
export async function storeStripeEvent(
  db: Database,
  queue: Queue,
  ev: { id: string; type: string; created: number; payload: string },
): Promise<{ duplicate: boolean }> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ id: string }>(
      `insert into app.stripe_events (id, type, created, payload) values ($1, $2, to_timestamp($3), $4)
       on conflict (id) do nothing returning id`,
      [ev.id, ev.type, ev.created, ev.payload],
    );
    if (!row) return { duplicate: true };
    await queue.enqueue(tx, PROCESS_STRIPE_EVENT, { event_id: ev.id } satisfies StripeEventJob, {
      key: ev.id,
    });
    return { duplicate: false };
  });
}

export type StoredStripeEvent = {
  id: string;
  type: string;
  created: Date;
  payload: string;
  status: StripeEventStatus;
};

export async function stripeEvent(q: Queryable, id: string): Promise<StoredStripeEvent | null> {
  const [row] = await q.query<StoredStripeEvent>(
    'select id, type, created, payload, status from app.stripe_events where id = $1',
    [id],
  );
  return row ?? null;
}

/** Records how a run ended; `pending` keeps the event for the job's next run. */
export async function markStripeEvent(
  q: Queryable,
  id: string,
  status: StripeEventStatus,
  lastError: string | null,
): Promise<void> {
  await q.query(
    `update app.stripe_events
        set status = $2, attempts = attempts + 1, last_error = left($3, 2000),
            processed_at = case when $2 in ('processed', 'ignored') then now() else processed_at end
      where id = $1`,
    [id, status, lastError],
  );
}

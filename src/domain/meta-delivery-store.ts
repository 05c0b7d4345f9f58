import type { Database } from '../platform/db/database.ts';
import type { Queue } from '../platform/queue/queue.ts';
import { NEWEST_PROOF, RECEIVES } from './connected-accounts.ts';
import { EVENT_JOB, PROCESS_WEBHOOK_EVENT } from './webhook-events.ts';

// Storing a verified Meta delivery (docs/webhooks.md, docs/decisions.md "Webhook receipt in one
// autocommit statement"): its routes, raw body, events and their jobs in one statement, committed
// on its own. The receipt's whole durable work; parsing the events is the worker's.

export type MetaRouteKey = { provider: string; externalId: string };
export type StoredMeta = { duplicate: boolean; events: string[]; unrouted: number[] };

/**
 * Each route finds its receiving account as `routeOf` does; the body is stored only when one does
 * and it is not a duplicate; one event per account; one job per event inserted, keyed as
 * `eventKey` keys it (so the sweep finds it), with the insert pg-boss's `send` would run
 * (`queue.keyedJobsSql`). A job the insert did not add (a conflict that cannot happen for a new
 * event) fails the statement: the body, its events and their jobs are stored together or not at all.
 */
const storeMeta = (jobs: string) => `with route as (
    select r.ord, a.organization_id, a.id
      from unnest($4::text[], $5::text[]) with ordinality as r(provider, external_id, ord)
      cross join lateral (
        select a.organization_id, a.id from app.connected_accounts a
         where a.provider = r.provider and a.external_id = r.external_id and ${RECEIVES}
         order by ${NEWEST_PROOF} limit 1) a
  ), d as (
    insert into app.webhook_deliveries (provider, delivery_id, payload)
    select 'meta', $1, $2 where exists (select from route)
    on conflict (provider, delivery_id) do nothing returning id
  ), e as (
    insert into app.webhook_events (organization_id, delivery, provider, account_id, delivery_id, topic)
    select distinct on (route.id) route.organization_id, d.id, 'meta', route.id, $1, $3
      from route, d order by route.id, route.ord
    on conflict (organization_id, provider, delivery_id, account_id) do nothing returning organization_id, id
  ), jobs as (
    ${jobs}
  )
  select (select array_agg(ord::int) from route) as routed, (select count(*)::int from d) as stored,
         (select coalesce(array_agg(id::text), '{}') from e) as events,
         -- Division by zero when an event has no job: the whole statement is undone.
         1 / ((select count(*) from jobs) = (select count(*) from e))::int as complete`;

/** The events' jobs, as `enqueue(…, {key: eventKey(job)})` would add them. */
const EVENT_JOBS = `select ${EVENT_JOB} from e`;

type Found = { routed: number[] | null; stored: number; events: string[] };

export function metaDeliveryStore(db: Database, queue: Queue) {
  let sql: string | undefined; // built at the first delivery: the queue is registered by then
  return {
    /**
     * Routes and stores a verified delivery and enqueues its events' jobs, all or nothing.
     * `unrouted`: indexes of the routes no connected account receives (nothing is stored when
     * none does); `duplicate`: the delivery was stored before, and nothing is stored or enqueued.
     */
    async store(d: Delivery): Promise<StoredMeta> {
      sql ??= storeMeta(queue.keyedJobsSql(PROCESS_WEBHOOK_EVENT, EVENT_JOBS));
      const params = [
        d.deliveryId,
        d.payload,
        d.topic,
        d.routes.map((r) => r.provider),
        d.routes.map((r) => r.externalId),
      ];
      const [found] = await db.query<Found>(sql, params, { prepare: true });
      const routed = new Set(found?.routed ?? []);
      const unrouted = d.routes.map((_, i) => i).filter((i) => !routed.has(i + 1));
      if (!found || routed.size === 0) return { duplicate: false, events: [], unrouted };
      return { duplicate: found.stored === 0, events: found.events, unrouted };
    },
  };
}

type Delivery = { deliveryId: string; topic: string; payload: string; routes: MetaRouteKey[] };

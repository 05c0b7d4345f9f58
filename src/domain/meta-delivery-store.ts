import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../platform/db/database.ts';
import type { Queue } from '../platform/queue/queue.ts';
import { NEWEST_PROOF, RECEIVES } from './connected-accounts.ts';
import { eventKey, PROCESS_WEBHOOK_EVENT, type ProcessWebhookJob } from './webhook-events.ts';

// Storing a verified Meta delivery (docs/webhooks.md, docs/decisions.md "Webhook receipts in one
// statement"): its routes, raw body and events in one statement, their jobs in the same
// transaction. The receipt's whole durable work; parsing the events is the worker's.

export type MetaRouteKey = { provider: string; externalId: string };
export type StoredMeta = { duplicate: boolean; events: string[]; unrouted: number[] };
type Routed = { organization_id: string; id: string; account_id: string };

/**
 * Each route finds its receiving account as `routeOf` does; the body is stored only when one does;
 * one event per account, with the id given for its route ($6, made here so that its job can be
 * enqueued before the answer comes back). `$7`/`$8`, when set, are the organization and account
 * the caller expects the one route to reach: any other finding stores nothing.
 */
const STORE_META = `with route as (
    select r.ord, a.organization_id, a.id
      from unnest($4::text[], $5::text[]) with ordinality as r(provider, external_id, ord)
      cross join lateral (
        select a.organization_id, a.id from app.connected_accounts a
         where a.provider = r.provider and a.external_id = r.external_id and ${RECEIVES}
         order by ${NEWEST_PROOF} limit 1) a
  ), d as (
    insert into app.webhook_deliveries (provider, delivery_id, payload)
    select 'meta', $1, $2 where exists (select from route)
      and ($7::uuid is null or (select bool_and(organization_id = $7 and id = $8) from route))
    on conflict (provider, delivery_id) do nothing returning id
  ), e as (
    insert into app.webhook_events (organization_id, id, delivery, provider, account_id, delivery_id, topic)
    select distinct on (route.id) route.organization_id, ($6::uuid[])[route.ord], d.id, 'meta', route.id, $1, $3
      from route, d order by route.id, route.ord
    on conflict (provider, delivery_id, account_id) do nothing returning organization_id, id, account_id
  )
  select (select array_agg(ord::int) from route) as routed, (select count(*)::int from d) as stored,
         (select coalesce(json_agg(json_build_object('organization_id', organization_id, 'id', id,
           'account_id', account_id)), '[]') from e) as events`;

type Found = { routed: number[] | null; stored: number; events: Routed[] };

const enqueue = (tx: Queryable, queue: Queue, job: ProcessWebhookJob) =>
  queue.enqueue(tx, PROCESS_WEBHOOK_EVENT, job, { key: eventKey(job), owner: true });

/** The hinted statement found something else (or a duplicate): its transaction rolls back. */
class Unexpected extends Error {}

/**
 * A Meta delivery store with a hint per route: the account a single-route delivery reached last
 * time. With a hint, the event's job is enqueued in the same write as the statement (two round
 * trips: that write, and `commit`); the statement still routes, and stores only if the hint holds.
 * Without one, or when it did not hold, the job waits for the statement's answer (three).
 */
export function metaDeliveryStore(db: Database, queue: Queue) {
  const hints = new Map<string, Routed>();
  const hintKey = (r: MetaRouteKey) => `${r.provider}\0${r.externalId}`;
  const remember = (routes: MetaRouteKey[], found: Found | undefined) => {
    const [route] = routes;
    const [event] = found?.events ?? [];
    if (routes.length !== 1 || !route || !event) return;
    if (hints.size >= 10_000) hints.clear(); // a bound, not a policy: hints are cheap to relearn
    hints.set(hintKey(route), event);
  };
  const params = (d: Delivery, ids: string[], hint?: Routed) => [
    d.deliveryId,
    d.payload,
    d.topic,
    d.routes.map((r) => r.provider),
    d.routes.map((r) => r.externalId),
    ids,
    hint?.organization_id ?? null,
    hint?.account_id ?? null,
  ];
  const answer = (d: Delivery, found: Found | undefined): StoredMeta => {
    const routed = new Set(found?.routed ?? []);
    const unrouted = d.routes.map((_, i) => i).filter((i) => !routed.has(i + 1));
    if (!found || routed.size === 0) return { duplicate: false, events: [], unrouted };
    return { duplicate: found.stored === 0, events: found.events.map((e) => e.id), unrouted };
  };

  async function hinted(d: Delivery, hint: Routed): Promise<StoredMeta | null> {
    const id = randomUUID();
    try {
      return await db.transaction(async (tx) => {
        const stored = tx.query<Found>(STORE_META, params(d, [id], hint));
        const job = enqueue(tx, queue, { organization_id: hint.organization_id, event_id: id });
        job.catch(() => {}); // awaited below, after the statement's own error
        const [found] = await stored;
        await job;
        if (found?.stored !== 1 || found.events[0]?.id !== id)
          throw new Unexpected('the route hint did not hold');
        return answer(d, found);
      });
    } catch (err) {
      if (!(err instanceof Unexpected)) throw err;
      // Rolled back, job and all. A stale hint or a duplicate (rare: Meta's retries): the plain
      // path stores it again or answers it as a duplicate, and learns the route afresh.
      hints.delete(hintKey(d.routes[0] as MetaRouteKey));
      return null;
    }
  }

  async function plain(d: Delivery): Promise<StoredMeta> {
    const ids = d.routes.map(() => randomUUID());
    const found = await db.transaction(async (tx) => {
      const [found] = await tx.query<Found>(STORE_META, params(d, ids));
      for (const e of found?.events ?? [])
        await enqueue(tx, queue, { organization_id: e.organization_id, event_id: e.id });
      return found;
    });
    remember(d.routes, found);
    return answer(d, found);
  }

  return {
    /**
     * Routes and stores a verified delivery and enqueues its events' jobs, all or nothing.
     * `unrouted`: indexes of the routes no connected account receives (nothing is stored when
     * none does); `duplicate`: the delivery was stored before, and nothing is stored or enqueued.
     */
    async store(d: Delivery): Promise<StoredMeta> {
      const hint = d.routes.length === 1 ? hints.get(hintKey(d.routes[0] as MetaRouteKey)) : undefined;
      return (hint && (await hinted(d, hint))) || plain(d);
    },
  };
}

type Delivery = { deliveryId: string; topic: string; payload: string; routes: MetaRouteKey[] };

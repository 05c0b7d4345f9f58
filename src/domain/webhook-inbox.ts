import { asMetaDelivery, type MetaRoute, metaRoutes } from '../channels/meta-webhook.ts';
import type { Database, Queryable } from '../platform/db/database.ts';
import type { Queue } from '../platform/queue/queue.ts';
import { NEWEST_PROOF, RECEIVES } from './connected-accounts.ts';
import { EVENT_JOB, PROCESS_WEBHOOK_EVENT } from './webhook-events.ts';

// The durable inbox of Meta deliveries (migrations/0055_webhook_inbox.sql, docs/decisions.md "The
// durable webhook inbox"). A receipt is one autocommit insert of the verified raw body; the
// worker's router takes the rows in batches and, in one transaction per batch, routes each to its
// connected accounts, stores the delivery once per body hash, one event per account with its job,
// and deletes the rows. A row is routed exactly once: its deletion commits with what it became.

/** Rows a router takes in one transaction. */
export const INBOX_BATCH = 200;

const RECEIPT = `insert into app.webhook_inbox (provider, delivery_id, payload) values ('meta', $1, $2)`;

/**
 * Commits a verified delivery's raw body (`deliveryId`: its SHA-256) to the inbox: one statement,
 * prepared per connection, committed on its own. Once it resolves, the delivery may be acknowledged.
 */
export async function receiveMeta(db: Database, deliveryId: string, payload: string): Promise<void> {
  await db.query(RECEIPT, [deliveryId, payload], { prepare: true });
}

/**
 * Takes the oldest rows no other router holds. Their order is the receipts' (identity ids), so a
 * delivery and Meta's retry of it are routed in the order they came.
 */
const TAKE = `select i.id::text as id, i.payload from app.webhook_inbox i
  order by i.id limit $1 for update skip locked`;

/**
 * Whether there is anything to take: one autocommit statement, where a batch's transaction is
 * three round trips. The router polls an empty inbox several times a second in every worker;
 * after a batch that took rows it goes straight to the next.
 */
const ANY = 'select exists (select from app.webhook_inbox) as any';

/**
 * One batch's routing and storing: deletes the taken rows ($1); each route ($4 the row, $5 the
 * provider, $6 the external id) finds its receiving account as `routeOf` does; the body of a row
 * some account receives is stored once per hash (the batch's first row of it; a hash stored before
 * stores nothing: a duplicate), with the row's received time; one event per account ($2/$3: each
 * routable row's topic), with the same received time; one job per event inserted, as `enqueue(…,
 * {key: eventKey(job)})` adds it. A job its insert did not add fails the statement (division by
 * zero), and with it the batch: nothing of it is stored and its rows stay in the inbox.
 */
const routeBatch = (jobs: string) => `with taken as (
    delete from app.webhook_inbox i where i.id = any($1::bigint[])
    returning i.id, i.delivery_id, i.payload, i.received_at
  ), topic as (
    select t.inbox, t.topic from unnest($2::bigint[], $3::text[]) as t(inbox, topic)
  ), route as (
    select r.inbox, r.ord, a.organization_id, a.id
      from unnest($4::bigint[], $5::text[], $6::text[]) with ordinality as r(inbox, provider, external_id, ord)
      cross join lateral (
        select a.organization_id, a.id from app.connected_accounts a
         where a.provider = r.provider and a.external_id = r.external_id and ${RECEIVES}
         order by ${NEWEST_PROOF} limit 1) a
  ), first as (
    select distinct on (t.delivery_id) t.id, t.delivery_id, t.payload, t.received_at
      from taken t where exists (select from route where route.inbox = t.id)
     order by t.delivery_id, t.id
  ), d as (
    insert into app.webhook_deliveries (provider, delivery_id, payload, received_at)
    select 'meta', f.delivery_id, f.payload, f.received_at from first f
    on conflict (provider, delivery_id) do nothing returning id, delivery_id, received_at
  ), e as (
    insert into app.webhook_events
      (organization_id, delivery, provider, account_id, delivery_id, topic, received_at)
    select distinct on (d.id, route.id) route.organization_id, d.id, 'meta', route.id, d.delivery_id,
           topic.topic, d.received_at
      from d join first f on f.delivery_id = d.delivery_id
      join route on route.inbox = f.id join topic on topic.inbox = f.id
     order by d.id, route.id, route.ord
    on conflict (organization_id, provider, delivery_id, account_id) do nothing returning organization_id, id
  ), jobs as (
    ${jobs}
  )
  select (select coalesce(array_agg(ord::int), '{}') from route) as routed,
         (select count(*)::int from first) as bodies, (select count(*)::int from d) as stored,
         (select count(*)::int from e) as events,
         -- Division by zero when an event has no job: the whole batch is undone.
         1 / ((select count(*) from jobs) = (select count(*) from e))::int as complete`;

const EVENT_JOBS = `select ${EVENT_JOB} from e`;

export type RoutedBatch = {
  /** Inbox rows taken (and deleted). */
  taken: number;
  /** Bodies stored anew; a routable body already stored is a duplicate and stores nothing. */
  stored: number;
  duplicates: number;
  events: number;
  /** Accounts named by a delivery that no connected account receives: logged, nothing stored. */
  unrouted: MetaRoute[];
  /** Rows that were not a Meta delivery (the receipt checks this: none, unless written by hand). */
  unreadable: number;
};

const none = (): RoutedBatch => ({
  taken: 0,
  stored: 0,
  duplicates: 0,
  events: 0,
  unrouted: [],
  unreadable: 0,
});

type Found = { routed: number[]; bodies: number; stored: number; events: number };

/**
 * The router of one process: `route()` takes one batch of inbox rows in a transaction of its own
 * and stores what they become, or leaves every one of them in the inbox if anything fails.
 */
export function webhookInboxRouter(db: Database, queue: Queue, batch = INBOX_BATCH) {
  let sql: string | undefined; // built at the first batch: the queue is registered by then
  let took = false; // the last batch took rows: under load the look would only cost a round trip
  return {
    async route(): Promise<RoutedBatch> {
      sql ??= routeBatch(queue.keyedJobsSql(PROCESS_WEBHOOK_EVENT, EVENT_JOBS));
      const text = sql;
      if (!took) {
        const [peek] = await db.query<{ any: boolean }>(ANY, [], { prepare: true });
        if (!peek?.any) return none();
      }
      const routed = await db.transaction((tx) => routeTaken(tx, text, batch));
      took = routed.taken > 0;
      return routed;
    },
  };
}

async function routeTaken(tx: Queryable, sql: string, batch: number): Promise<RoutedBatch> {
  const rows = await tx.query<{ id: string; payload: string }>(TAKE, [batch]);
  if (rows.length === 0) return none();
  const topics: [string[], string[]] = [[], []];
  const routes: [string[], string[], string[]] = [[], [], []];
  const named: MetaRoute[] = [];
  let unreadable = 0;
  for (const row of rows) {
    const d = readDelivery(row.payload);
    if (!d) {
      unreadable++;
      continue;
    }
    topics[0].push(row.id);
    topics[1].push(d.object);
    for (const r of metaRoutes(d)) {
      routes[0].push(row.id);
      routes[1].push(r.provider);
      routes[2].push(r.externalId);
      named.push(r);
    }
  }
  const [found] = await tx.query<Found>(sql, [rows.map((r) => r.id), ...topics, ...routes]);
  const routed = new Set(found?.routed ?? []);
  return {
    taken: rows.length,
    stored: found?.stored ?? 0,
    duplicates: (found?.bodies ?? 0) - (found?.stored ?? 0),
    events: found?.events ?? 0,
    unrouted: named.filter((_, i) => !routed.has(i + 1)),
    unreadable,
  };
}

function readDelivery(payload: string) {
  try {
    return asMetaDelivery(JSON.parse(payload));
  } catch {
    return null;
  }
}

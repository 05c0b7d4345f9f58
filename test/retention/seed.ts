import type { Queryable } from '../../src/platform/db/database.ts';

// Rows for the purge tests, written on the service path (owner privileges) as imports and the
// worker write them, then made old: the purge's rules are about age, and the database stamps
// created_at and updated_at itself (app.touch_timestamps), so `backdate` sets them with triggers
// off for that one statement (session_replication_role, transaction-local; the test databases'
// user may set it on both engines).

export type Db = Queryable & { transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> };

const one = async <T>(db: Queryable, sql: string, params: unknown[]) => (await db.query(sql, params))[0] as T;
const idOf = async (db: Queryable, sql: string, params: unknown[]) =>
  (await one<{ id: string }>(db, sql, params)).id;

export const organization = (db: Db, plan: string, name = `Retention ${plan}`) =>
  idOf(db, 'insert into public.organizations (name, plan) values ($1, $2) returning id', [name, plan]);

export const contact = (db: Db, org: string, name: string) =>
  idOf(db, 'insert into public.contacts (organization_id, first_name) values ($1, $2) returning id', [
    org,
    name,
  ]);

export const item = (db: Db, org: string, sku: string, onHand: number) =>
  idOf(
    db,
    `insert into public.inventory_items (organization_id, name, sku, quantity_on_hand)
     values ($1, $2, $2, $3) returning id`,
    [org, sku, onHand],
  );

/** An order of `quantity` × item, moved through `statuses` as the lifecycle moves it (stock too). */
export async function order(db: Db, org: string, itemId: string, quantity: number, statuses: string[]) {
  const id = await idOf(
    db,
    `insert into public.orders (organization_id, customer_name) values ($1, 'Old Customer') returning id`,
    [org],
  );
  await db.query(
    `insert into public.order_items (organization_id, order_id, item_id, name, quantity, unit_price)
     values ($1, $2, $3, 'Widget', $4, 10)`,
    [org, id, itemId, quantity],
  );
  for (const status of statuses)
    await db.query('update public.orders set status = $3 where organization_id = $1 and id = $2', [
      org,
      id,
      status,
    ]);
  return id;
}

export const account = (db: Db, org: string, externalId: string) =>
  idOf(
    db,
    `insert into app.connected_accounts (organization_id, provider, external_id, access_token_encrypted)
     values ($1, 'whatsapp', $2, 'v1:test:not-a-real-token') returning id`,
    [org, externalId],
  );

export const conversation = (db: Db, org: string, accountId: string, contactId: string) =>
  idOf(
    db,
    `insert into public.conversations (organization_id, account_id, contact_id, channel)
     values ($1, $2, $3, 'whatsapp') returning id`,
    [org, accountId, contactId],
  );

export const message = (db: Db, org: string, conversationId: string, accountId: string, body: string) =>
  idOf(
    db,
    `insert into public.messages (organization_id, conversation_id, account_id, direction, type, body, status)
     values ($1, $2, $3, 'in', 'text', $4, 'received') returning id`,
    [org, conversationId, accountId, body],
  );

export const delivery = (db: Db, key: string) =>
  idOf(
    db,
    `insert into app.webhook_deliveries (provider, delivery_id, payload) values ('internal', $1, '{}') returning id`,
    [key],
  );

export const webhookEvent = (db: Db, org: string, deliveryId: string, key: string) =>
  idOf(
    db,
    `insert into app.webhook_events (organization_id, delivery, provider, delivery_id, topic, status)
     values ($1, $2, 'internal', $3, 'order.status', 'processed') returning id`,
    [org, deliveryId, key],
  );

export const attempt = (db: Db, org: string | null) =>
  one<{ id: number }>(
    db,
    `insert into public.agent_auth_attempts (organization_id, outcome, reason) values ($1, 'failure', 'test')
     returning id::int`,
    [org],
  ).then((r) => r.id);

/** Sets `columns` of the rows `where` matches to `days` days ago. */
export async function backdate(
  db: Db,
  table: string,
  columns: string[],
  days: number,
  where: string,
  params: unknown[],
) {
  const n = params.length + 1;
  const set = columns.map((c) => `${c} = now() - $${n}::int * interval '1 day'`).join(', ');
  await db.transaction(async (tx) => {
    await tx.query('set local session_replication_role = replica');
    await tx.query(`update ${table} set ${set} where ${where}`, [...params, days]);
  });
}

export const count = async (db: Db, from: string, params: unknown[] = []) =>
  (await one<{ n: number }>(db, `select count(*)::int as n from ${from}`, params)).n;

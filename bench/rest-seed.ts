// The data bench/rest.ts measures on: one organization (the caller's, on the scale plan with no
// daily quota) holding 100,000 contacts and 500 orders of 3 items, and 10 other organizations
// holding 10,000 contacts each, so every read has other tenants' rows to skip; and the ids the
// requests draw from (SPREAD random contacts, every order).
import type { Database } from '../src/platform/db/database.ts';
import { SERVICE } from '../src/platform/db/database.ts';

export const TENANT_CONTACTS = 100_000;
const OTHER_TENANTS = 10;
const ORDERS = 500;

/** How many distinct contacts the by-id read and the list's cursors are drawn from. */
export const SPREAD = 2_000;

/** Ids the measured requests draw from: real traffic asks for many rows, not one. */
export type Seeded = { contactIds: string[]; orderIds: string[] };

export async function seedTenant(db: Database, org: string): Promise<Seeded> {
  await db.query("update organizations set plan = 'scale' where id = $1", [org]);
  await db.query("update plans set api_calls_per_day = null where slug = 'scale'");
  // The largest plan allows 50,000 contacts: the scratch database raises its ceiling above the
  // seed. Every insert is still checked against it, as in production, which since 0036 reads one
  // counter row instead of counting the tenant (and keeps agent-usage's count right).
  await db.query("update plans set contacts = 1000000 where slug = 'scale'");
  const contacts = `insert into public.contacts (organization_id, first_name, last_name, email, company)
    select $1, 'First ' || g, 'Last ' || g, 'c' || g || '@example.test', 'Acme' from generate_series(1, $2::int) g`;
  await db.query(contacts, [org, TENANT_CONTACTS]);
  const others = await db.query<{ id: string }>(
    `insert into public.organizations (name, plan) select 'Other ' || g, 'scale' from generate_series(1, $1::int) g
     returning id`,
    [OTHER_TENANTS],
  );
  for (const o of others) await db.query(contacts, [o.id, TENANT_CONTACTS / OTHER_TENANTS]);
  // Orders through the service path, so numbers, totals and counters are what triggers make.
  await db.asPrincipal(SERVICE, async (tx) => {
    await tx.query(
      `insert into public.orders (organization_id, contact_id, currency)
       select $1, (select id from public.contacts where organization_id = $1 limit 1), 'USD'
         from generate_series(1, $2::int)`,
      [org, ORDERS],
    );
    await tx.query(
      `insert into public.order_items (organization_id, order_id, name, quantity, unit_price)
       select o.organization_id, o.id, 'Item ' || g, g, 9.5
         from public.orders o, generate_series(1, 3) g where o.organization_id = $1`,
      [org],
    );
  });
  await db.query('analyze');
  // A random spread of the tenant's contacts, and every order.
  const drawn = await db.query<{ id: string }>(
    'select id from public.contacts where organization_id = $1 order by random() limit $2',
    [org, SPREAD],
  );
  const orders = await db.query<{ id: string }>('select id from public.orders where organization_id = $1', [
    org,
  ]);
  if (drawn.length < SPREAD || orders.length === 0) throw new Error('seed failed');
  return { contactIds: drawn.map((r) => r.id), orderIds: orders.map((r) => r.id) };
}

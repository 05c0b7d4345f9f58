// The big tenant of bench/scale.ts: an owner signed up over HTTP (so the bench holds a real access
// token and an agent token for MCP), BENCH_ROWS contacts (default 100,000) and as many orders with
// two lines each in their organization, beside a small second tenant (1,000 contacts and orders)
// whose rows must never show.
import pg from 'pg';
import type { RunningService } from '../src/main.ts';
import { signUpOwner } from './bench-service.ts';

export const TENANT_ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
export const SMALL_TENANT_ROWS = 1_000;

/** Real first and last names, so a fragment such as "ann" matches a realistic share of a tenant. */
const FIRST = [
  'Ann',
  'Anna',
  'Joanne',
  'Hannah',
  'Dianne',
  'John',
  'Maria',
  'Luis',
  'Grace',
  'Tom',
  'Sofia',
  'Ahmed',
  'Chen',
  'Olga',
  'Pierre',
  'Keiko',
  'Ravi',
  'Fatima',
  'Jonas',
  'Emma',
];
const LAST = [
  'Smith',
  'Garcia',
  'Nguyen',
  'Müller',
  'Rossi',
  'Okafor',
  'Kowalski',
  'Tanaka',
  'Silva',
  'Brown',
  'Johansson',
  'Dubois',
  'Khan',
  'Novak',
  'Hansen',
  'Lopez',
  'Murphy',
  'Ivanova',
  'Cohen',
  'Mann',
];

export type BigTenant = { org: string; accessToken: string; small: { org: string; accessToken: string } };

const pgArray = (xs: string[]) => `{${xs.map((x) => `"${x}"`).join(',')}}`;

/**
 * `rows` contacts and orders (each order two lines) in `org`: contact g is named from the lists
 * above with its number as a suffix of the last name ("Smith 4242"), email c<g>-<tag>@…, phone
 * +1555<g, 7 digits>; order g is ORD-<g, 6 digits or more> of contact g with its name, email and phone.
 * Triggers are off for the seed (session_replication_role): the plan ceiling, the order-number
 * counter and the line totals are what a seed would trip over, and the seed writes what they would.
 */
async function seedRows(client: pg.Client, org: string, rows: number, tag: string) {
  await client.query(
    `insert into public.contacts (organization_id, first_name, last_name, email, phone, company, tags, created_at)
     select $1, ($3::text[])[1 + g % 20], ($4::text[])[1 + (g / 20) % 20] || ' ' || g,
            'c' || g || '-' || $5 || '@example.test', '+1555' || lpad(g::text, 7, '0'),
            case when g % 7 = 0 then 'Acme ' || (g % 100) end,
            case when g % 50 = 0 then array['vip'] else '{}' end, now() - (g || ' seconds')::interval
       from generate_series(1, $2::int) g`,
    [org, rows, pgArray(FIRST), pgArray(LAST), tag],
  );
  // A second apart, newest first as numbered, so a client's keyset cursor is `created_at=lt.…`.
  await client.query(
    `insert into public.orders (organization_id, order_number, contact_id, customer_name, customer_email,
                                customer_phone, status, subtotal, total, created_at)
     select c.organization_id, 'ORD-' || lpad(c.n::text, greatest(6, length(c.n::text)), '0'), c.id, concat_ws(' ', c.first_name, c.last_name),
            c.email, c.phone, 'pending', 20, 20, now() - (c.n || ' seconds')::interval
       from (select *, row_number() over (order by email) as n from public.contacts where organization_id = $1) c`,
    [org],
  );
  await client.query(
    `insert into public.order_items (organization_id, order_id, name, sku, quantity, unit_price, total)
     select o.organization_id, o.id, 'Item ' || l, 'SKU-' || l, 1, 10, 10
       from public.orders o cross join generate_series(1, 2) l where o.organization_id = $1`,
    [org],
  );
}

export async function seedBigTenant(svc: RunningService, url: string): Promise<BigTenant> {
  const { db } = svc.services;
  const big = await signUpOwner(svc, 'Scale');
  const small = await signUpOwner(svc, 'Small');
  // No daily quota in the way of a few thousand requests.
  await db.query("update organizations set plan = 'scale' where id = any ($1::uuid[])", [
    [big.org, small.org],
  ]);
  await db.query("update plans set api_calls_per_day = null where slug = 'scale'");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('set session_replication_role = replica');
    await seedRows(client, big.org, TENANT_ROWS, 'a');
    await seedRows(client, small.org, SMALL_TENANT_ROWS, 'b');
    await client.query('set session_replication_role = origin');
    // Replica mode skipped the triggers that keep the per-organization row counts (0036): count
    // the seeded tenants as that migration counts what exists.
    await client.query(
      `insert into app.counters (organization_id, name, value)
         select organization_id, 'rows:contacts', count(*) from public.contacts
          where organization_id = any ($1::uuid[]) group by organization_id
       on conflict (organization_id, name) do update set value = excluded.value`,
      [[big.org, small.org]],
    );
    // Vacuum as autovacuum would by the time anyone searches: it also moves the rows from GIN's
    // pending list (fastupdate) into the trigram indexes, which a plain analyze does not.
    await client.query('vacuum analyze');
  } finally {
    await client.end();
  }
  return {
    org: big.org,
    accessToken: big.accessToken,
    small: { org: small.org, accessToken: small.accessToken },
  };
}

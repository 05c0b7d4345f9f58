// Plan ceilings live in the database, so every write path meets them: the write that would pass
// the ceiling fails whole (SV403 → 403 plan_limit_exceeded), and racing writers cannot both take
// the last slot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../src/platform/db/database.ts';
import { fromPgError } from '../../src/platform/errors.ts';
import { type FreshDatabase, freshDatabase, onPostgres } from '../helpers/db.ts';
import { as, seedAgent, seedTenant, sqlstate, type Tenant } from './fixtures.ts';

let fresh: FreshDatabase;
beforeAll(async () => {
  fresh = await freshDatabase();
});
afterAll(() => fresh?.drop());

/** A tenant on the free plan (the fixtures start on scale). */
async function freeTenant(tag: string): Promise<Tenant> {
  const t = await seedTenant(fresh.db, tag);
  await fresh.db.query("update organizations set plan = 'free' where id = $1", [t.orgId]);
  return t;
}

const fill = (t: Tenant, table: string, n: number, column = 'first_name') =>
  fresh.db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      `insert into ${table} (organization_id, ${column}) select $1, 'x' || g from generate_series(1, $2::int) g`,
      [t.orgId, n],
    ),
  );
const countOf = async (t: Tenant, table: string) =>
  (
    await fresh.db.query<{ n: number }>(
      `select count(*)::int as n from ${table} where organization_id = $1`,
      [t.orgId],
    )
  )[0]?.n;

/**
 * `n` orders, and the month's order count that goes with them. The month is the database's own
 * `now()` in UTC (`app.month_counter` in migrations/0006), which no test can set, so a check a
 * moment later could land in the next month and find a fresh count. The count is therefore
 * copied, in the same transaction (one `now()`), to the following month: whatever follows holds
 * on either side of a month end.
 */
const fillThisMonthsOrders = (t: Tenant, n: number) =>
  fresh.db.transaction(async (tx) => {
    await tx.query(
      "insert into orders (organization_id, notes) select $1, 'x' || g from generate_series(1, $2::int) g",
      [t.orgId, n],
    );
    const [counted] = await tx.query<{ value: string }>(
      `select value from app.counters
        where organization_id = $1 and name = 'orders:' || to_char(now() at time zone 'utc', 'YYYY-MM')`,
      [t.orgId],
    );
    expect(Number(counted?.value)).toBe(n);
    await tx.query(
      `insert into app.counters (organization_id, name, value)
       values ($1, 'orders:' || to_char((now() at time zone 'utc') + interval '1 month', 'YYYY-MM'), $2)`,
      [t.orgId, n],
    );
  });

async function refusal(p: Promise<unknown>) {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err, 'the write should have been refused').not.toBeNull();
  return fromPgError(err);
}

describe('plan ceilings', () => {
  it('refuse the contact past the limit with the details agents need', async () => {
    const t = await freeTenant('ceil-contacts');
    await fill(t, 'contacts', 50);
    const e = await refusal(
      as(fresh.db, t.member.as, "insert into contacts (first_name) values ('one too many')"),
    );
    expect(e.status).toBe(403);
    expect(e.code).toBe('plan_limit_exceeded');
    expect(e.details).toEqual({ resource: 'contacts', limit: 50, used: 50, plan: 'free' });
    expect(e.message).toMatch(/Free plan allows 50 contacts/);
  });

  it('refuse a multi-row insert that crosses the limit whole: nothing is written', async () => {
    const t = await freeTenant('ceil-bulk');
    await fill(t, 'inventory_items', 28, 'name');
    const bulk = as(fresh.db, t.member.as, "insert into inventory_items (name) values ('a'), ('b'), ('c')");
    expect((await refusal(bulk)).details).toEqual({
      resource: 'inventory_items',
      limit: 30,
      used: 28,
      plan: 'free',
    });
    expect(await countOf(t, 'inventory_items')).toBe(28);
  });

  it('hold for the service path too, and for warehouses, orders this month and active agent keys', async () => {
    const t = await freeTenant('ceil-all');
    expect(
      await sqlstate(
        as(fresh.db, SERVICE, 'insert into warehouses (organization_id, name) values ($1, $2)', [
          t.orgId,
          'Second',
        ]),
      ),
    ).toBe('SV403');
    await fillThisMonthsOrders(t, 25);
    expect(await sqlstate(as(fresh.db, t.owner.as, "insert into orders (notes) values ('26th')"))).toBe(
      'SV403',
    );
    // Deleting an order does not give its slot back this month.
    await as(fresh.db, t.owner.as, 'delete from orders where id = (select id from orders limit 1)');
    expect(
      await sqlstate(as(fresh.db, t.owner.as, "insert into orders (notes) values ('after delete')")),
    ).toBe('SV403');
    // A new month starts a new count (simulated: the month's count is renamed to a past month).
    await fresh.db.query(
      "update app.counters set name = 'orders:2000-' || right(name, 2) where organization_id = $1 and name like 'orders:%'",
      [t.orgId],
    );
    await as(fresh.db, t.owner.as, "insert into orders (notes) values ('new month')");
    await seedAgent(fresh.db, t.orgId, ['read']);
    await expect(seedAgent(fresh.db, t.orgId, ['read'])).rejects.toMatchObject({ code: 'SV403' });
    // A revoked key frees its slot.
    await fresh.db.query('update agent_api_keys set is_active = false where organization_id = $1', [t.orgId]);
    await seedAgent(fresh.db, t.orgId, ['read']);
  });

  it('count only rows an upsert inserts: re-delivering an existing record at the limit succeeds', async () => {
    const t = await freeTenant('ceil-upsert');
    await fill(t, 'contacts', 49);
    const upsert = `insert into contacts (source, external_id, first_name) values ('shopify', 'c-1', $1)
      on conflict (organization_id, source, external_id) do update set first_name = excluded.first_name`;
    await as(fresh.db, t.member.as, upsert, ['First']); // the 50th contact
    await as(fresh.db, t.member.as, upsert, ['Again']); // an update, not a new contact
    expect(await countOf(t, 'contacts')).toBe(50);
    expect(
      await sqlstate(as(fresh.db, t.member.as, "insert into contacts (first_name) values ('51st')")),
    ).toBe('SV403');
  });

  // The ceiling check reads one limit column (app.plan_limit, migrations/0058); everything else
  // reads app.plan_limits. They must agree, or a plan would show one limit and enforce another.
  it('check the same limits every plan shows', async () => {
    const rows = await fresh.db.query<{
      slug: string;
      name: string;
      shown: string | null;
      checked: number | null;
    }>(
      `select p.slug, l.key as name, l.value #>> '{}' as shown, app.plan_limit(p, l.key) as checked
         from public.plans p, jsonb_each(app.plan_limits(p)) l
        where jsonb_typeof(l.value) in ('number', 'null')`,
    );
    expect(new Set(rows.map((r) => r.name))).toEqual(
      new Set([
        'contacts',
        'orders',
        'inventory_items',
        'outbound_messages',
        'api_calls_per_day',
        'warehouses',
        'ai_annotations',
        'agents',
        'data_retention_days',
      ]),
    );
    const differ = rows.filter((r) => (r.shown === null ? null : Number(r.shown)) !== r.checked);
    expect(differ).toEqual([]);
    expect(rows.filter((r) => r.checked !== null).length).toBeGreaterThan(4);
  });

  it('are unlimited where the plan says null, and move with the plan', async () => {
    const t = await freeTenant('ceil-growth');
    await fill(t, 'orders', 25, 'notes');
    await fresh.db.query("update organizations set plan = 'growth' where id = $1", [t.orgId]);
    await fill(t, 'orders', 30, 'notes');
    expect(await countOf(t, 'orders')).toBe(55);
  });

  // Only PostgreSQL runs these writers at once: PGlite has one connection, so its transactions
  // never overlap and the test would pass without the advisory lock it is meant to guard.
  it.skipIf(!onPostgres())('let exactly one of six racing writers take the last slot', async () => {
    const t = await freeTenant('ceil-race');
    await fill(t, 'contacts', 49);
    // Each writer keeps its transaction open a moment after its insert, as a slow request would,
    // so the six overlap for certain instead of by luck of scheduling.
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        fresh.db.asPrincipal(t.member.as, async (tx) => {
          await tx.query('insert into contacts (first_name) values ($1)', [`racer ${i}`]);
          await tx.query('select pg_sleep(0.2)');
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected')) {
      expect(((r as PromiseRejectedResult).reason as { code: string }).code).toBe('SV403');
    }
    expect(await countOf(t, 'contacts')).toBe(50);
  });
});

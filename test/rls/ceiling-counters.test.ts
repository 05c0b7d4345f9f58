// The plan ceilings read per-organization counters kept by triggers (migrations/0036) instead of
// counting the tenant: an insert into a large tenant costs what it costs in an empty one, the
// counters follow every path that adds, removes or moves rows, and the ceiling still stops exactly at
// the limit when writers race.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, SERVICE } from '../../src/platform/db/database.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { fromPgError } from '../../src/platform/errors.ts';
import { type FreshDatabase, freshDatabase, onPostgres } from '../helpers/db.ts';
import { as, seedTenant, type Tenant } from './fixtures.ts';

let fresh: FreshDatabase;
beforeAll(async () => {
  fresh = await freshDatabase();
});
afterAll(() => fresh?.drop());

const LARGE = 100_000;
const INSERTS = 1_000;

/**
 * The tenant's rows of each counted table, counted, beside what its counter (app.counters
 * 'rows:…', 0 when there is none) and the usage agent-usage reports say.
 */
async function counts(t: Tenant) {
  const [row] = await fresh.db.query<Record<string, number>>(
    `select (select count(*) from contacts where organization_id = $1)::int as contacts,
            (select count(*) from inventory_items where organization_id = $1)::int as inventory_items,
            (select count(*) from warehouses where organization_id = $1)::int as warehouses,
            coalesce((select value from app.counters where organization_id = $1 and name = 'rows:contacts'), 0)::int
              as kept_contacts,
            coalesce((select value from app.counters where organization_id = $1 and name = 'rows:inventory_items'), 0)::int
              as kept_inventory_items,
            coalesce((select value from app.counters where organization_id = $1 and name = 'rows:warehouses'), 0)::int
              as kept_warehouses,
            app.resource_usage($1, 'contacts')::int as used_contacts,
            app.resource_usage($1, 'inventory_items')::int as used_inventory_items,
            app.resource_usage($1, 'warehouses')::int as used_warehouses`,
    [t.orgId],
  );
  return row as Record<string, number>;
}

function expectCounted(c: Record<string, number>) {
  expect(c.kept_contacts).toBe(c.contacts);
  expect(c.kept_inventory_items).toBe(c.inventory_items);
  expect(c.kept_warehouses).toBe(c.warehouses);
  expect(c.used_contacts).toBe(c.contacts);
  expect(c.used_inventory_items).toBe(c.inventory_items);
  expect(c.used_warehouses).toBe(c.warehouses);
}

/** What agent-usage reads for the caller's organization. */
async function usageAs(t: Tenant): Promise<Record<string, number>> {
  const [row] = await as<{ usage: Record<string, number> }>(
    fresh.db,
    t.owner.as,
    'select app.current_usage() as usage',
  );
  return row?.usage as Record<string, number>;
}

/** `n` contacts x1…xn in the tenant, through the service path. */
const addContacts = (t: Tenant, n: number) =>
  fresh.db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      "insert into contacts (organization_id, first_name) select $1, 'x' || g from generate_series(1, $2::int) g",
      [t.orgId, n],
    ),
  );

/**
 * `n` transactions at once, settled: on PostgreSQL each on a connection of its own, so they
 * overlap for certain; PGlite has one connection, where the same writers run one after another.
 */
async function racing<T>(n: number, each: (db: Database, i: number) => Promise<T>) {
  const db: Database = fresh.url ? openPostgres(fresh.url, n) : fresh.db;
  try {
    return await Promise.allSettled(Array.from({ length: n }, (_, i) => each(db, i)));
  } finally {
    if (db !== fresh.db) await db.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

describe('plan ceilings on counters', () => {
  it('insert into a tenant of 100,000 contacts as into an empty one (ratio printed), counting right', async () => {
    // The scale plan allows 50,000 contacts: this database's copy allows more, so that the
    // ceiling is still checked on every insert below.
    await fresh.db.query("update plans set contacts = 1000000 where slug = 'scale'");
    const large = await seedTenant(fresh.db, 'ceil-large');
    const empty = await seedTenant(fresh.db, 'ceil-empty');
    // In slices: PGlite runs in this process, and one statement of 100,000 rows (five trigram
    // indexes) would hold its event loop long enough for vitest's own messages to time out.
    for (let from = 1; from <= LARGE; from += 10_000) {
      await fresh.db.asPrincipal(SERVICE, (tx) =>
        tx.query(
          `insert into contacts (organization_id, first_name, last_name)
           select $1, 'seed', 'n' || g from generate_series($2::int, $3::int) g`,
          [large.orgId, from, Math.min(LARGE, from + 9_999)],
        ),
      );
    }
    expect((await usageAs(large)).contacts).toBe(LARGE);

    // Single-row inserts as a member, as REST and MCP write them, in interleaved blocks of 50.
    const ms: Record<'large' | 'empty', number[]> = { large: [], empty: [] };
    for (let block = 0; block < INSERTS / 50; block++) {
      for (const [name, t] of [
        ['large', large],
        ['empty', empty],
      ] as const) {
        const start = performance.now();
        for (let i = 0; i < 50; i++) {
          await as(fresh.db, t.member.as, 'insert into contacts (first_name) values ($1)', [
            `new ${block}.${i}`,
          ]);
        }
        ms[name].push(performance.now() - start);
      }
    }
    const ratio = median(ms.empty) / median(ms.large);
    console.log(
      `[ceiling-counters] ${INSERTS} single-row inserts, median of 50-insert blocks: ` +
        `tenant of ${LARGE}: ${median(ms.large).toFixed(1)} ms, empty tenant: ${median(ms.empty).toFixed(1)} ms; ` +
        `rate at ${LARGE} / rate at 0 = ${ratio.toFixed(2)}× (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`,
    );

    const big = await counts(large);
    expect(big.contacts).toBe(LARGE + INSERTS);
    expectCounted(big);
    const small = await counts(empty);
    expect(small.contacts).toBe(INSERTS);
    expectCounted(small);
    expect((await usageAs(large)).contacts).toBe(LARGE + INSERTS);
    expect((await usageAs(empty)).contacts).toBe(INSERTS);
  }, 300_000);

  it('let exactly the free slots go to 20 concurrent inserts, and refuse the rest with SV403', async () => {
    const t = await seedTenant(fresh.db, 'ceil-race20');
    await fresh.db.query("update organizations set plan = 'free' where id = $1", [t.orgId]);
    await addContacts(t, 40);
    // Each holds its transaction open a moment after its insert (as a slow request would).
    const results = await racing(20, (db, i) =>
      db.asPrincipal(t.member.as, async (tx) => {
        await tx.query('insert into contacts (first_name) values ($1)', [`racer ${i}`]);
        await tx.query('select pg_sleep(0.1)');
      }),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [fromPgError(r.reason)] : []));
    expect(refused).toHaveLength(10);
    for (const e of refused) {
      expect(e.status).toBe(403);
      expect(e.code).toBe('plan_limit_exceeded');
      expect(e.details).toEqual({ resource: 'contacts', limit: 50, used: 50, plan: 'free' });
    }
    const c = await counts(t);
    expect(c.contacts).toBe(50);
    expectCounted(c);
  }, 60_000);

  // Every writer of a counter takes the organization's turn (an advisory lock, migrations/0058)
  // before the counter row. A transaction that removes a contact and adds one, beside others
  // that only add, must neither deadlock nor miscount.
  it('stay right when concurrent transactions delete and insert in one organization', async () => {
    const t = await seedTenant(fresh.db, 'ceil-mixed');
    await addContacts(t, 20);
    const results = await racing(20, (db, i) =>
      db.asPrincipal(t.owner.as, async (tx) => {
        if (i % 2 === 0)
          await tx.query('delete from contacts where id = (select id from contacts where first_name = $1)', [
            `x${i + 1}`,
          ]);
        await tx.query('insert into contacts (first_name) values ($1)', [`writer ${i}`]);
        await tx.query('select pg_sleep(0.05)');
        if (i % 2 === 1) await tx.query('insert into contacts (first_name) values ($1)', [`again ${i}`]);
      }),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const c = await counts(t);
    expect(c.contacts).toBe(20 - 10 + 20 + 10);
    expectCounted(c);
  }, 60_000);

  it('follow deletes, cascades and moves, and leave with the organization', async () => {
    const a = await seedTenant(fresh.db, 'ceil-moves-a');
    const b = await seedTenant(fresh.db, 'ceil-moves-b');
    const [w] = await as<{ id: string }>(
      fresh.db,
      a.owner.as,
      "insert into warehouses (name) values ('Second') returning id",
    );
    await as(
      fresh.db,
      a.owner.as,
      "insert into inventory_items (name, warehouse_id) select 'i' || g, $1 from generate_series(1, 5) g",
      [w?.id],
    );
    await as(fresh.db, a.owner.as, "insert into inventory_items (name) values ('in main')");
    await as(
      fresh.db,
      a.member.as,
      "insert into contacts (first_name) select 'c' || g from generate_series(1, 7) g",
    );
    expectCounted(await counts(a));

    // People delete, several rows at once.
    await as(fresh.db, a.owner.as, "delete from contacts where first_name in ('c1', 'c2')");
    await as(fresh.db, a.owner.as, 'delete from inventory_items where warehouse_id = $1', [w?.id]);
    await as(fresh.db, a.owner.as, 'delete from warehouses where id = $1', [w?.id]);
    const after = await counts(a);
    expect(after).toMatchObject({ contacts: 5, inventory_items: 1, warehouses: 1 });
    expectCounted(after);

    // A row moved by the service role to another organization counts there, not here.
    await fresh.db.asPrincipal(SERVICE, (tx) =>
      tx.query("update contacts set organization_id = $2 where organization_id = $1 and first_name = 'c3'", [
        a.orgId,
        b.orgId,
      ]),
    );
    expect(await counts(a)).toMatchObject({ contacts: 4, used_contacts: 4 });
    expect(await counts(b)).toMatchObject({ contacts: 1, used_contacts: 1 });

    // A deleted organization takes its rows and its counters.
    await fresh.db.query('delete from organizations where id = $1', [a.orgId]);
    const [left] = await fresh.db.query<{ n: number }>(
      'select count(*)::int as n from app.counters where organization_id = $1',
      [a.orgId],
    );
    expect(left?.n).toBe(0);
    expectCounted(await counts(b));
  });
});

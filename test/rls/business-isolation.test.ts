// Tenant isolation on the business tables, proved in SQL: whatever a request of organization A
// names (an id, an organization_id), row-level security must keep B's rows out of reach. The
// attacker is A's owner, the most privileged person in A, so no role rule can mask a hole.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/platform/db/database.ts';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { as, rowAsOwner, seedTenant, sqlstate, type Tenant, unique } from './fixtures.ts';

let fresh: FreshDatabase;
let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  fresh = await freshDatabase();
  a = await seedTenant(fresh.db, 'iso-a');
  b = await seedTenant(fresh.db, 'iso-b');
});
afterAll(() => fresh?.drop());

// An order to hang child rows on, created with owner privileges.
async function orderOf(orgId: string): Promise<string> {
  const [row] = await fresh.db.query<{ id: string }>(
    'insert into orders (organization_id) values ($1) returning id',
    [orgId],
  );
  return (row as { id: string }).id;
}

type Spec = {
  table: string;
  /** Columns for a new row of `orgId`, organization_id aside (child rows need a parent there). */
  fields: (orgId: string) => Promise<Record<string, unknown>>;
  /** A visible change for UPDATE attempts. */
  change: string;
  /** order_status_events is read-only for callers: writes fail on the grant, not on a policy. */
  writable: boolean;
};

const specs: Spec[] = [
  {
    table: 'contacts',
    fields: async () => ({ first_name: unique('c') }),
    change: "notes = 'x'",
    writable: true,
  },
  {
    table: 'warehouses',
    fields: async () => ({ name: unique('w') }),
    change: "address = '{}'",
    writable: true,
  },
  {
    table: 'inventory_items',
    fields: async () => ({ name: unique('i') }),
    change: "name = 'x'",
    writable: true,
  },
  { table: 'orders', fields: async () => ({ notes: 'n' }), change: "notes = 'x'", writable: true },
  {
    table: 'order_items',
    fields: async (org) => ({ order_id: await orderOf(org), name: 'line', quantity: 2, unit_price: 3 }),
    change: 'quantity = 9',
    writable: true,
  },
  {
    table: 'order_status_events',
    fields: async (org) => ({ order_id: await orderOf(org), to_status: 'confirmed' }),
    change: "note = 'x'",
    writable: false,
  },
];

// insert ... returning id, as `principal` or (without one) with owner privileges.
async function insertRow(table: string, values: Record<string, unknown>, principal?: Principal) {
  const cols = Object.keys(values);
  const sql = `insert into ${table} (${cols.join(', ')}) values (${cols.map((_, i) => `$${i + 1}`).join(', ')})
               returning id, organization_id`;
  const params = Object.values(values);
  const rows = principal ? await as(fresh.db, principal, sql, params) : await fresh.db.query(sql, params);
  return rows[0] as { id: string; organization_id: string };
}

const countAsOwner = async (table: string, orgId: string) =>
  (
    await fresh.db.query<{ n: number }>(
      `select count(*)::int as n from ${table} where organization_id = $1`,
      [orgId],
    )
  )[0]?.n;

const seedRow = async (spec: Spec, orgId: string) =>
  (await insertRow(spec.table, { organization_id: orgId, ...(await spec.fields(orgId)) })).id;

describe.each(specs)('$table', (spec) => {
  const { table } = spec;

  it("shows none of B's rows to A, not even by id", async () => {
    const id = await seedRow(spec, b.orgId);
    expect(await as(fresh.db, a.owner.as, `select * from ${table} where id = $1`, [id])).toEqual([]);
    const [seen] = await as(
      fresh.db,
      a.owner.as,
      `select count(*)::int as n from ${table} where organization_id = $1`,
      [b.orgId],
    );
    expect(seen?.n).toBe(0);
  });

  it("updates none of B's rows by id, and B's row stays as it was", async () => {
    const id = await seedRow(spec, b.orgId);
    const before = await rowAsOwner(fresh.db, table, id);
    const attempt = as(
      fresh.db,
      a.owner.as,
      `update ${table} set ${spec.change} where id = $1 returning id`,
      [id],
    );
    if (spec.writable) expect(await attempt).toEqual([]);
    else expect(await sqlstate(attempt)).toBe('42501');
    expect(await rowAsOwner(fresh.db, table, id)).toEqual(before);
  });

  it("deletes none of B's rows by id", async () => {
    const id = await seedRow(spec, b.orgId);
    const before = await rowAsOwner(fresh.db, table, id);
    const attempt = as(fresh.db, a.owner.as, `delete from ${table} where id = $1 returning id`, [id]);
    if (spec.writable) expect(await attempt).toEqual([]);
    else expect(await sqlstate(attempt)).toBe('42501');
    expect(await rowAsOwner(fresh.db, table, id)).toEqual(before);
  });

  it('refuses a row inserted with organization_id = B (42501)', async () => {
    // Child rows point at B's own parent, so only the policy (not a foreign key) can refuse them.
    const values = { organization_id: b.orgId, ...(await spec.fields(b.orgId)) };
    const before = await countAsOwner(table, b.orgId);
    expect(await sqlstate(insertRow(table, values, a.owner.as))).toBe('42501');
    expect(await countAsOwner(table, b.orgId)).toBe(before);
  });

  it("refuses to move one of A's rows into B (42501), and the row stays in A", async () => {
    const id = await seedRow(spec, a.orgId);
    const before = await rowAsOwner(fresh.db, table, id);
    const attempt = as(fresh.db, a.owner.as, `update ${table} set organization_id = $2 where id = $1`, [
      id,
      b.orgId,
    ]);
    expect(await sqlstate(attempt)).toBe('42501');
    expect(await rowAsOwner(fresh.db, table, id)).toEqual(before);
  });

  it("fills a missing organization_id from the caller's claims (status history: no writes at all)", async () => {
    // A member (the least privileged person) relies on the default, as the REST interface does.
    const attempt = insertRow(table, await spec.fields(a.orgId), a.member.as);
    if (spec.writable) expect((await attempt).organization_id).toBe(a.orgId);
    else expect(await sqlstate(attempt)).toBe('42501');
  });
});

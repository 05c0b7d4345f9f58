// The input limits hold in the database, for every write path, and are the numbers the domain's
// schemas check (src/domain/input-limits.ts): each limit is written to its table at the limit
// (accepted) and one past it (refused). A limit changed on one side only fails here. Also: the
// migration that added the missing ones (0014) still runs on a database holding rows that break
// them, and refuses new ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_ORDER_LINES,
  MAX_PRICE,
  PHONE_INPUT_MAX,
  QUANTITY,
  TAGS,
  TEXT_MAX,
} from '../../src/domain/input-limits.ts';
import { NewContact, NewOrder, OrderLine } from '../../src/domain/inputs.ts';
import { SERVICE } from '../../src/platform/db/database.ts';
import { loadMigrations, migrate } from '../../src/platform/db/migrate.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { fromPgError } from '../../src/platform/errors.ts';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { as, seedTenant, sqlstate, type Tenant, unique } from './fixtures.ts';

let fresh: FreshDatabase;
let t: Tenant;
beforeAll(async () => {
  fresh = await freshDatabase();
  t = await seedTenant(fresh.db, 'limits');
});
afterAll(() => fresh?.drop());

const owner = (sql: string, params: unknown[] = []) => as(fresh.db, t.owner.as, sql, params);
const newOrder = async () =>
  (await owner('insert into orders (notes) values (null) returning id'))[0]?.id as string;

/** A text of `n` characters that is also unique (SKUs are) and a valid email where one is needed. */
function text(column: string, n: number): string {
  const base = unique('v');
  if (column.endsWith('email')) return `${base}@example.test`.padStart(n, 'x');
  return base.padEnd(n, 'x').slice(-n);
}

/** Writes `value` into `table.column` the way a /rest/v1 insert would (as the tenant's owner). */
async function write(table: string, column: string, value: unknown) {
  switch (table) {
    case 'order_items':
      return owner(
        `insert into order_items (order_id, quantity, ${column === 'name' ? 'name' : `name, ${column}`})
         values ($1, 1, ${column === 'name' ? '$2' : "'line', $2"})`,
        [await newOrder(), value],
      );
    case 'inventory_items':
      return owner(
        `insert into inventory_items (${column === 'name' ? 'name' : `name, ${column}`})
                    values (${column === 'name' ? '$1' : "'item', $1"})`,
        [value],
      );
    case 'order_status_events': {
      // Written by the database itself; the service path stands in for it. (The order first:
      // PGlite has one connection, so a transaction inside another would wait for ever.)
      const order = await newOrder();
      return fresh.db.asPrincipal(SERVICE, (tx) =>
        tx.query(
          `insert into order_status_events (organization_id, order_id, to_status, ${column})
           values ($1, $2, 'pending', $3)`,
          [t.orgId, order, value],
        ),
      );
    }
    default:
      return owner(`insert into ${table} (${column}) values ($1)`, [value]);
  }
}

describe('text lengths', () => {
  const cases = Object.entries(TEXT_MAX).flatMap(([table, columns]) =>
    Object.entries(columns).map(([column, max]) => [`${table}.${column}`, table, column, max] as const),
  );
  it.each(cases)('%s takes %#: its limit and not one character more', async (_, table, column, max) => {
    await write(table, column, text(column, max));
    expect(await sqlstate(write(table, column, text(column, max + 1)))).toBe('23514');
  });

  it('is what the domain’s schemas check, so MCP refuses what the database would', () => {
    const contact = (first_name: string) => NewContact.safeParse({ first_name }).success;
    expect(contact('x'.repeat(TEXT_MAX.contacts.first_name))).toBe(true);
    expect(contact('x'.repeat(TEXT_MAX.contacts.first_name + 1))).toBe(false);
    const line = (name: string) => OrderLine.safeParse({ name, quantity: 1 }).success;
    expect(line('x'.repeat(TEXT_MAX.order_items.name))).toBe(true);
    expect(line('x'.repeat(TEXT_MAX.order_items.name + 1))).toBe(false);
    // A phone is at most 40 characters as typed and fits the orders' phone columns.
    expect(PHONE_INPUT_MAX).toBeLessThanOrEqual(TEXT_MAX.orders.customer_phone);
  });
});

describe('order lines', () => {
  it('take a quantity from 1 to 1,000,000', async () => {
    const order = await newOrder();
    const line = (q: number) =>
      owner(`insert into order_items (order_id, name, quantity) values ($1, 'l', $2)`, [order, q]);
    await line(QUANTITY.min);
    await line(QUANTITY.max);
    expect(await sqlstate(line(QUANTITY.min - 1))).toBe('23514');
    expect(await sqlstate(line(QUANTITY.max + 1))).toBe('23514');
    const q = (quantity: number) => OrderLine.safeParse({ name: 'l', quantity }).success;
    expect([q(QUANTITY.min), q(QUANTITY.max), q(QUANTITY.min - 1), q(QUANTITY.max + 1)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('take a price in cents up to 9,999,999,999.99', async () => {
    const order = await newOrder();
    const line = (p: number) =>
      owner(`insert into order_items (order_id, name, quantity, unit_price) values ($1, 'l', 1, $2)`, [
        order,
        p,
      ]);
    await line(MAX_PRICE);
    expect(await sqlstate(line(MAX_PRICE + 0.01))).toBe('22003');
    const price = (unit_price: number) => OrderLine.safeParse({ name: 'l', quantity: 1, unit_price }).success;
    expect([price(MAX_PRICE), price(MAX_PRICE + 0.01), price(1.005)]).toEqual([true, false, false]);
  });

  it('are at most 200 per order, however they arrive, refused with 400 naming order_id', async () => {
    const full = await newOrder();
    const lines = (order: string, n: number) =>
      owner(
        `insert into order_items (order_id, name, quantity) select $1, 'l' || g, 1 from generate_series(1, $2::int) g`,
        [order, n],
      );
    await lines(full, MAX_ORDER_LINES);
    const refusal = await lines(full, 1).catch((e) => e);
    expect(refusal.code).toBe('SV400');
    expect(fromPgError(refusal)).toMatchObject({
      status: 400,
      code: 'validation_error',
      details: { issues: [{ path: 'order_id' }], limit: MAX_ORDER_LINES, order_id: full },
    });
    expect(await sqlstate(lines(await newOrder(), MAX_ORDER_LINES + 1))).toBe('SV400');
    // Moving a line in from another order counts too.
    const other = await newOrder();
    await lines(other, 1);
    expect(
      await sqlstate(owner('update order_items set order_id = $1 where order_id = $2', [full, other])),
    ).toBe('SV400');
    const items = (n: number) =>
      NewOrder.safeParse({
        address: 'a',
        phone_number: '+14155550100',
        items: Array.from({ length: n }, () => ({ name: 'l', quantity: 1 })),
      }).success;
    expect([items(MAX_ORDER_LINES), items(MAX_ORDER_LINES + 1)]).toEqual([true, false]);
  });
});

describe('contact tags', () => {
  const tagged = (tags: string[]) =>
    owner('insert into contacts (first_name, tags) values ($1, $2)', ['T', tags]);
  it('are at most 50, each 1 to 100 characters', async () => {
    await tagged(Array.from({ length: TAGS.max }, (_, i) => `${i}`.padEnd(TAGS.maxLength, 't')));
    expect(await sqlstate(tagged(Array.from({ length: TAGS.max + 1 }, (_, i) => `t${i}`)))).toBe('23514');
    expect(await sqlstate(tagged(['x'.repeat(TAGS.maxLength + 1)]))).toBe('23514');
    expect(await sqlstate(tagged(['ok', ' ']))).toBe('23514');
    const tags = (list: string[]) => NewContact.safeParse({ first_name: 'T', tags: list }).success;
    expect([tags(['x'.repeat(TAGS.maxLength)]), tags(['x'.repeat(TAGS.maxLength + 1)])]).toEqual([
      true,
      false,
    ]);
  });
});

describe('migration 0014 on a database that already breaks the new limits', () => {
  it('runs, keeps the rows, and refuses new ones', async () => {
    const db = await openPglite(undefined);
    try {
      const before = loadMigrations().filter((m) => m.name < '0014');
      await migrate(db, before);
      await db.transaction(async (tx) => {
        const [org] = await tx.query<{ id: string }>(
          "insert into organizations (name) values ('Old data') returning id",
        );
        const [order] = await tx.query<{ id: string }>(
          'insert into orders (organization_id) values ($1) returning id',
          [org?.id],
        );
        await tx.query(
          `insert into order_items (organization_id, order_id, name, quantity) values ($1, $2, 'bulk', 2000000)`,
          [org?.id, order?.id],
        );
        await tx.query(`insert into contacts (organization_id, tags) values ($1, array[''])`, [org?.id]);
      });
      await migrate(db);
      const checks = await db.query<{ conname: string; convalidated: boolean }>(
        `select conname, convalidated from pg_constraint
          where conname in ('order_items_quantity_check', 'contacts_tags_check') order by conname`,
      );
      expect(checks).toEqual([
        { conname: 'contacts_tags_check', convalidated: false },
        { conname: 'order_items_quantity_check', convalidated: false },
      ]);
      const [kept] = await db.query<{ quantity: number }>('select quantity from order_items');
      expect(kept?.quantity).toBe(2000000);
      expect(await sqlstate(db.query("update order_items set name = 'bulk order'"))).toBe('23514');
    } finally {
      await db.close();
    }
  });
});

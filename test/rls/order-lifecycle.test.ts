// The order lifecycle and its stock movements, as the database enforces them for every path
// (these statements are what /rest/v1 and the MCP tools send).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_STATUSES, ORDER_TRANSITIONS } from '../../src/domain/order-lifecycle.ts';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { as, seedAgent, seedTenant, sqlstate, type Tenant } from './fixtures.ts';

let fresh: FreshDatabase;
let t: Tenant;
beforeAll(async () => {
  fresh = await freshDatabase();
  t = await seedTenant(fresh.db, 'lifecycle');
});
afterAll(() => fresh?.drop());

/** Separate transactions a few milliseconds apart: PGlite's clock counts milliseconds. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

type Stock = { quantity_on_hand: number; quantity_reserved: number };

const newItem = async (onHand: number) =>
  (
    await as<{ id: string }>(
      fresh.db,
      t.member.as,
      'insert into inventory_items (name, quantity_on_hand) values ($1, $2) returning id',
      [`item ${Math.random()}`, onHand],
    )
  )[0]?.id as string;

/** An order as the service path imports it, in any status, with lines linked to `items`. */
const orderIn = async (status: string, lines: [itemId: string | null, qty: number][] = []) => {
  const [o] = await fresh.db.query<{ id: string }>(
    'insert into orders (organization_id) values ($1) returning id',
    [t.orgId],
  );
  const id = o?.id as string;
  for (const [itemId, qty] of lines) {
    await fresh.db.query(
      'insert into order_items (organization_id, order_id, item_id, name, quantity) values ($1, $2, $3, $4, $5)',
      [t.orgId, id, itemId, 'line', qty],
    );
  }
  if (status !== 'pending') await fresh.db.query('update orders set status = $2 where id = $1', [id, status]);
  return id;
};

/** Walks an order along the lifecycle with owner privileges (the import path obeys it too). */
const PATH_TO: Record<string, string[]> = {
  pending: [],
  confirmed: ['confirmed'],
  processing: ['confirmed', 'processing'],
  shipped: ['confirmed', 'processing', 'shipped'],
  delivered: ['confirmed', 'processing', 'shipped', 'delivered'],
  cancelled: ['cancelled'],
  returned: ['confirmed', 'processing', 'shipped', 'returned'],
};
const orderAt = async (status: string) => {
  const id = await orderIn('pending');
  for (const s of PATH_TO[status] ?? [])
    await fresh.db.query('update orders set status = $2 where id = $1', [id, s]);
  return id;
};

const move = (id: string, status: string, who = t.member.as) =>
  as(fresh.db, who, 'update orders set status = $2 where id = $1 returning status', [id, status]);

const stock = async (itemId: string) =>
  (
    await fresh.db.query<Stock>(
      'select quantity_on_hand, quantity_reserved from inventory_items where id = $1',
      [itemId],
    )
  )[0] as Stock;

describe('the lifecycle table', () => {
  it('allows exactly the moves of docs/decisions.md, pair by pair', async () => {
    for (const from of ORDER_STATUSES) {
      for (const to of ORDER_STATUSES) {
        if (from === to) continue;
        const id = await orderAt(from);
        const allowed = ORDER_TRANSITIONS[from].includes(to);
        if (allowed) {
          expect(await move(id, to), `${from} → ${to}`).toEqual([{ status: to }]);
        } else {
          expect(await sqlstate(move(id, to)), `${from} → ${to}`).toBe('SV409');
        }
      }
    }
  });

  it('says what is allowed next when it refuses a move', async () => {
    const id = await orderAt('pending');
    try {
      await move(id, 'shipped');
      throw new Error('expected a refusal');
    } catch (err) {
      const e = err as { hint?: string; detail?: string };
      expect(e.hint).toBe('invalid_transition');
      expect(JSON.parse(e.detail as string)).toEqual({
        from: 'pending',
        to: 'shipped',
        allowed: ['cancelled', 'confirmed'],
      });
    }
  });
});

describe('stock follows the lifecycle', () => {
  it('confirm reserves, ship consumes, return restocks; lines without an item are ignored', async () => {
    const item = await newItem(10);
    const id = await orderIn('pending', [
      [item, 3],
      [item, 1],
      [null, 5],
    ]);
    await move(id, 'confirmed');
    expect(await stock(item)).toEqual({ quantity_on_hand: 10, quantity_reserved: 4 });
    await move(id, 'processing');
    expect(await stock(item)).toEqual({ quantity_on_hand: 10, quantity_reserved: 4 });
    await move(id, 'shipped');
    expect(await stock(item)).toEqual({ quantity_on_hand: 6, quantity_reserved: 0 });
    await move(id, 'delivered');
    await move(id, 'returned');
    expect(await stock(item)).toEqual({ quantity_on_hand: 10, quantity_reserved: 0 });
  });

  it('cancelling releases a reservation, and cancelling a pending order touches nothing', async () => {
    const item = await newItem(5);
    const confirmed = await orderIn('pending', [[item, 2]]);
    await move(confirmed, 'confirmed');
    await move(confirmed, 'cancelled');
    expect(await stock(item)).toEqual({ quantity_on_hand: 5, quantity_reserved: 0 });
    const pending = await orderIn('pending', [[item, 2]]);
    await move(pending, 'cancelled');
    expect(await stock(item)).toEqual({ quantity_on_hand: 5, quantity_reserved: 0 });
  });

  it('lets available go negative (backorder) rather than refuse an order', async () => {
    const item = await newItem(1);
    const id = await orderIn('pending', [[item, 4]]);
    await move(id, 'confirmed');
    expect(await stock(item)).toEqual({ quantity_on_hand: 1, quantity_reserved: 4 });
  });

  it('gives a reservation back when a confirmed order is deleted', async () => {
    const item = await newItem(5);
    const id = await orderIn('pending', [[item, 2]]);
    await move(id, 'confirmed');
    await as(fresh.db, t.owner.as, 'delete from orders where id = $1', [id]);
    expect(await stock(item)).toEqual({ quantity_on_hand: 5, quantity_reserved: 0 });
  });

  it('rolls back the stock with a refused move', async () => {
    const item = await newItem(5);
    const id = await orderIn('pending', [[item, 2]]);
    expect(await sqlstate(move(id, 'shipped'))).toBe('SV409');
    expect(await stock(item)).toEqual({ quantity_on_hand: 5, quantity_reserved: 0 });
  });
});

describe('status events', () => {
  it('records creation and every change with who made it and the note', async () => {
    const agent = await seedAgent(fresh.db, t.orgId, ['write']);
    const id = (
      await as<{ id: string }>(fresh.db, t.member.as, "insert into orders (notes) values ('e') returning id")
    )[0]?.id as string;
    await tick();
    await fresh.db.asPrincipal(agent.as, async (tx) => {
      await tx.query("select set_config('svc.status_note', 'customer paid', true)");
      await tx.query("update orders set status = 'confirmed' where id = $1", [id]);
    });
    await tick();
    await move(id, 'cancelled');
    const events = await fresh.db.query(
      'select from_status, to_status, note, actor from order_status_events where order_id = $1 order by created_at, id',
      [id],
    );
    expect(events).toEqual([
      { from_status: null, to_status: 'pending', note: null, actor: `user:${t.member.userId}` },
      {
        from_status: 'pending',
        to_status: 'confirmed',
        note: 'customer paid',
        actor: `agent:${agent.keyId}`,
      },
      { from_status: 'confirmed', to_status: 'cancelled', note: null, actor: `user:${t.member.userId}` },
    ]);
  });

  it('keeps the events of one transaction in the order they happened (an import walks several)', async () => {
    const events = await fresh.db.asPrincipal(t.member.as, async (tx) => {
      const [order] = await tx.query<{ id: string }>("insert into orders (notes) values ('w') returning id");
      // PGlite's clock counts milliseconds: let one pass.
      await tx.query('select pg_sleep(0.003)');
      await tx.query("update orders set status = 'confirmed' where id = $1", [order?.id]);
      return tx.query<{ to_status: string; at: string }>(
        'select to_status, created_at::text as at from order_status_events where order_id = $1 order by created_at, id',
        [order?.id],
      );
    });
    expect(events.map((e) => e.to_status)).toEqual(['pending', 'confirmed']);
    expect(events[0]?.at).not.toBe(events[1]?.at);
  });

  it('keeps the history append-only for callers', async () => {
    const id = await orderIn('pending');
    expect(
      await sqlstate(as(fresh.db, t.owner.as, 'delete from order_status_events where order_id = $1', [id])),
    ).toBe('42501');
    expect(
      await sqlstate(
        as(
          fresh.db,
          t.owner.as,
          "insert into order_status_events (order_id, to_status) values ($1, 'shipped')",
          [id],
        ),
      ),
    ).toBe('42501');
  });
});

describe('lines of an order that holds stock', () => {
  it('cannot be added, removed or re-priced once confirmed; names can still be corrected', async () => {
    const item = await newItem(5);
    const id = await orderIn('pending', [[item, 1]]);
    const [line] = await fresh.db.query<{ id: string }>('select id from order_items where order_id = $1', [
      id,
    ]);
    await move(id, 'confirmed');
    const lineId = line?.id as string;
    expect(
      await sqlstate(
        as(fresh.db, t.member.as, "insert into order_items (order_id, name, quantity) values ($1, 'x', 1)", [
          id,
        ]),
      ),
    ).toBe('SV409');
    expect(
      await sqlstate(
        as(fresh.db, t.member.as, 'update order_items set quantity = 9 where id = $1', [lineId]),
      ),
    ).toBe('SV409');
    expect(await sqlstate(as(fresh.db, t.owner.as, 'delete from order_items where id = $1', [lineId]))).toBe(
      'SV409',
    );
    await as(fresh.db, t.member.as, "update order_items set name = 'renamed' where id = $1", [lineId]);
    expect(await stock(item)).toEqual({ quantity_on_hand: 5, quantity_reserved: 1 });
  });

  it('cannot be unlinked from a held item (the reservation would be stranded)', async () => {
    const item = await newItem(5);
    const id = await orderIn('pending', [[item, 3]]);
    await move(id, 'confirmed');
    expect(
      await sqlstate(
        as(fresh.db, t.member.as, 'update order_items set item_id = null where order_id = $1', [id]),
      ),
    ).toBe('SV409');
    await move(id, 'cancelled');
    expect(await stock(item)).toEqual({ quantity_on_hand: 5, quantity_reserved: 0 });
  });

  it('can be written by the import path for an order in any status', async () => {
    const id = await orderIn('pending');
    await fresh.db.query("update orders set status = 'confirmed' where id = $1", [id]);
    await fresh.db.query(
      "insert into order_items (organization_id, order_id, name, quantity) values ($1, $2, 'imported', 2)",
      [t.orgId, id],
    );
    const [order] = await fresh.db.query<{ n: number }>(
      'select count(*)::int as n from order_items where order_id = $1',
      [id],
    );
    expect(order?.n).toBe(1);
  });

  it('still lets an inventory item be deleted, unlinking its lines', async () => {
    const item = await newItem(5);
    const id = await orderIn('pending', [[item, 1]]);
    await move(id, 'confirmed');
    await as(fresh.db, t.owner.as, 'delete from inventory_items where id = $1', [item]);
    const [line] = await fresh.db.query('select item_id from order_items where order_id = $1', [id]);
    expect(line).toEqual({ item_id: null });
  });
});

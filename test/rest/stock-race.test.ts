// Orders racing for the last unit of stock. Backorders are allowed (docs/data-model.md: available
// may go negative), so no confirmation is refused; the promise is that every reservation is
// counted: confirming and cancelling orders at once must never lose an update of
// quantity_reserved. Only PostgreSQL runs the requests' transactions at once; PGlite has one
// connection and the sequential case is in test/rls/order-lifecycle.test.ts.
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/db.ts';
import { type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const ORDERS = 6;

let svc: TestService;
let owner: Session;
beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Last Unit Ltd');
});
afterAll(() => svc?.stop());

const rest = () =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${owner.access_token}` },
  });

async function one<T>(q: PromiseLike<{ data: T | null; error: unknown }>): Promise<T> {
  const { data, error } = await q;
  if (error) throw new Error(JSON.stringify(error));
  return data as T;
}

/** Orders of one line each, every line taking one unit of `itemId`. */
async function ordersFor(itemId: string, n: number): Promise<string[]> {
  const orders = await one<{ id: string }[]>(
    rest()
      .from('orders')
      .insert(Array.from({ length: n }, (_, i) => ({ notes: `racer ${i}` })))
      .select('id'),
  );
  await one(
    rest()
      .from('order_items')
      .insert(orders.map((o) => ({ order_id: o.id, item_id: itemId, name: 'Last one', quantity: 1 })))
      .select('id'),
  );
  return orders.map((o) => o.id);
}

const setStatus = (ids: string[], status: string) =>
  Promise.all(ids.map((id) => rest().from('orders').update({ status }).eq('id', id).select('status')));

const stockOf = (itemId: string) =>
  one<{ quantity_on_hand: number; quantity_reserved: number }>(
    rest().from('inventory_items').select('quantity_on_hand, quantity_reserved').eq('id', itemId).single(),
  );

describe('orders racing for the last unit', () => {
  it.skipIf(!onPostgres())(
    'confirming them at once reserves exactly one unit each (a backorder), and cancelling them at once gives every unit back',
    async () => {
      const item = await one<{ id: string }>(
        rest()
          .from('inventory_items')
          .insert({ name: 'Last one', quantity_on_hand: 1 })
          .select('id')
          .single(),
      );
      const ids = await ordersFor(item.id, ORDERS);

      const confirmed = await setStatus(ids, 'confirmed');
      for (const r of confirmed) {
        expect(r.error).toBeNull();
        expect(r.data).toEqual([{ status: 'confirmed' }]);
      }
      expect(await stockOf(item.id)).toEqual({ quantity_on_hand: 1, quantity_reserved: ORDERS });

      const cancelled = await setStatus(ids, 'cancelled');
      for (const r of cancelled) expect(r.data).toEqual([{ status: 'cancelled' }]);
      expect(await stockOf(item.id)).toEqual({ quantity_on_hand: 1, quantity_reserved: 0 });

      // Each order's history says it once: confirmed, then cancelled.
      const events = await one<{ order_id: string; to_status: string }[]>(
        rest().from('order_status_events').select('order_id, to_status').in('order_id', ids),
      );
      expect(events.filter((e) => e.to_status === 'confirmed')).toHaveLength(ORDERS);
      expect(events.filter((e) => e.to_status === 'cancelled')).toHaveLength(ORDERS);
    },
  );
});

// The order lifecycle of docs/decisions.md. The database enforces it (migrations/0007, table
// app.order_transitions); this copy describes it to callers (svc://schema/orders, error hints),
// and a test checks that the two agree pair by pair.

export const ORDER_STATUSES = [
  'pending',
  'confirmed',
  'processing',
  'shipped',
  'delivered',
  'cancelled',
  'returned',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const ORDER_TRANSITIONS: Record<OrderStatus, OrderStatus[]> = {
  pending: ['confirmed', 'cancelled'],
  confirmed: ['processing', 'cancelled'],
  processing: ['shipped', 'cancelled'],
  shipped: ['delivered', 'returned'],
  delivered: ['returned'],
  cancelled: [],
  returned: [],
};

/** What each move does to the stock of line items linked to an inventory item. */
export const STOCK_EFFECTS: Record<string, string> = {
  confirmed: 'reserves: quantity_reserved += quantity',
  cancelled: 'releases a reservation (from confirmed or processing): quantity_reserved -= quantity',
  shipped: 'consumes the reservation: quantity_on_hand -= quantity, quantity_reserved -= quantity',
  returned: 'restocks: quantity_on_hand += quantity',
};

/**
 * The shortest walk of allowed moves from one status to another, without `from` (empty when they
 * are the same); null when the lifecycle cannot get there. Imports that learn an order's state
 * late (paid and shipped at once) take every step, so stock moves as it would have.
 */
export function pathTo(from: OrderStatus, to: OrderStatus): OrderStatus[] | null {
  const previous = new Map<OrderStatus, OrderStatus | null>([[from, null]]);
  const queue: OrderStatus[] = [from];
  for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
    if (s === to) {
      const path: OrderStatus[] = [];
      for (let at: OrderStatus | null | undefined = s; at && at !== from; at = previous.get(at))
        path.unshift(at);
      return path;
    }
    for (const next of ORDER_TRANSITIONS[s])
      if (!previous.has(next)) {
        previous.set(next, s);
        queue.push(next);
      }
  }
  return null;
}

// The order lifecycle as the service enforces it. Source of truth: the trigger `orders_transition`
// over table app.order_transitions (migrations/0007_order_lifecycle.sql), described to callers by
// src/domain/order-lifecycle.ts (ORDER_TRANSITIONS) and docs/decisions.md "Orders". /rest/v1 does
// not expose that table, so this mirror decides which buttons show; test/web/orders.test.ts checks
// it against ORDER_TRANSITIONS, and should they ever disagree the service's 409 is what the page shows.

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

export const NEXT_STATUSES: Record<OrderStatus, OrderStatus[]> = {
  pending: ['confirmed', 'cancelled'],
  confirmed: ['processing', 'cancelled'],
  processing: ['shipped', 'cancelled'],
  shipped: ['delivered', 'returned'],
  delivered: ['returned'],
  cancelled: [],
  returned: [],
};

/** A move's button says what the person does, not the state's name. */
export const MOVE_LABELS: Record<OrderStatus, string> = {
  pending: 'Back to pending',
  confirmed: 'Confirm',
  processing: 'Start processing',
  shipped: 'Mark shipped',
  delivered: 'Mark delivered',
  cancelled: 'Cancel order',
  returned: 'Mark returned',
};

/** What a move does to stock (docs/decisions.md), said beside the buttons. */
export const STOCK_NOTES: Partial<Record<OrderStatus, string>> = {
  confirmed: 'Confirming reserves the stock of linked items.',
  shipped: 'Shipping takes the reserved stock off hand.',
  cancelled: 'Cancelling gives a reservation back.',
  returned: 'A return puts the items back on hand.',
};

export const statusLabel = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

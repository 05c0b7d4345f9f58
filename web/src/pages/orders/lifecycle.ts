// The order lifecycle as the service describes it to callers (src/domain/order-lifecycle.ts, which a
// test holds to the database's app.order_transitions), imported by the bundle rather than copied:
// it decides which buttons show; the database decides, and its 409 shows, should they disagree.

import type { OrderStatus } from '../../../../src/domain/order-lifecycle';

export {
  ORDER_STATUSES,
  ORDER_TRANSITIONS as NEXT_STATUSES,
  type OrderStatus,
} from '../../../../src/domain/order-lifecycle';

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

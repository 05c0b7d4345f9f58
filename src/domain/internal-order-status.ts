import type { Queryable } from '../platform/db/database.ts';
import { notFound } from '../platform/errors.ts';
import { ORDER_TRANSITIONS, type OrderStatus } from './order-lifecycle.ts';

// An `order.status` internal event (docs/webhooks.md), applied in the worker's transaction on
// the service path: the order moves through its lifecycle as updateOrderStatus moves it (the
// database's transition trigger, stock effects and status event, with the note). A status the
// lifecycle cannot reach from the current one changes nothing but is recorded as a status event
// note (from = to = the current status), never an error.

export type OrderStatusEvent = {
  order_id?: string | undefined;
  order_number?: string | undefined;
  status: OrderStatus;
  note?: string | undefined;
};

export type OrderStatusApplied = { order_id: string; previous: OrderStatus; moved: boolean };

export async function applyOrderStatusEvent(
  tx: Queryable,
  organizationId: string,
  e: OrderStatusEvent,
): Promise<OrderStatusApplied> {
  const [order] = await tx.query<{ id: string; status: OrderStatus }>(
    `select o.id, o.status from public.orders o
      where o.organization_id = $1 and (o.id = $2::uuid or o.order_number = $3) for update`,
    [organizationId, e.order_id ?? null, e.order_number ?? null],
  );
  if (!order) throw notFound('order');
  if (order.status === e.status) return { order_id: order.id, previous: order.status, moved: false };
  if (ORDER_TRANSITIONS[order.status].includes(e.status)) {
    await tx.query(`select set_config('svc.status_note', $1, true)`, [e.note ?? 'internal event']);
    await tx.query('update public.orders set status = $3 where organization_id = $1 and id = $2', [
      organizationId,
      order.id,
      e.status,
    ]);
    return { order_id: order.id, previous: order.status, moved: true };
  }
  const note = `internal event asked for ${e.status}, which the lifecycle cannot reach from ${order.status}${
    e.note ? `: ${e.note}` : ''
  }`;
  await tx.query(
    `insert into public.order_status_events (organization_id, order_id, from_status, to_status, note, actor)
     values ($1, $2, $3, $3, left($4, 2000), 'internal-webhook')`,
    [organizationId, order.id, order.status, note],
  );
  return { order_id: order.id, previous: order.status, moved: false };
}

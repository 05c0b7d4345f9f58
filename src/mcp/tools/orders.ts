import { z } from 'zod';
import { NewOrder, OrderStatusChange, Price, Quantity } from '../../domain/inputs.ts';
import { createOrder } from '../../domain/order-create.ts';
import { ORDER_STATUSES, ORDER_TRANSITIONS } from '../../domain/order-lifecycle.ts';
import { getOrder, listOrders, updateOrderStatus } from '../../domain/orders.ts';
import { OrderSummary, OrderWithItems } from '../../domain/records.ts';
import { defineTool, offered } from '../tool.ts';
import { CREATE, cursor, dateOrTime, limit, nextCursor, orderedRange, READ, UPDATE } from './common.ts';

const orderId = z.guid();
const orderNumber = z.string().max(40).describe('e.g. ORD-000042 or 42');
const lifecycle = Object.entries(ORDER_TRANSITIONS)
  .map(([from, to]) => `${from}→${to.join('|') || 'final'}`)
  .join(', ');
const since = dateOrTime('or a date');
const statuses = offered(
  z.union([z.enum(ORDER_STATUSES), z.array(z.enum(ORDER_STATUSES)).max(7)], {
    error: `One of ${ORDER_STATUSES.join(', ')}, or a list of them`,
  }),
  { type: 'array', items: { enum: ORDER_STATUSES } },
);

export const listOrdersTool = defineTool({
  name: 'svc_list_orders',
  title: 'List orders',
  description:
    'Browse orders newest first by status, contact, creation time or number. Returns {orders, next_cursor}.',
  scope: 'read',
  input: z.strictObject({
    status: statuses.optional(),
    contact_id: z.guid().optional(),
    order_number: orderNumber.optional(),
    created_after: since.optional(),
    created_before: since.optional(),
    limit: limit(),
    cursor: cursor(),
  }),
  output: z.object({ orders: z.array(OrderSummary), next_cursor: nextCursor() }),
  records: 'orders',
  annotations: READ,
  run: ({ s, principal }, { status, ...rest }) => {
    orderedRange(rest.created_after, rest.created_before, ['created_after', 'created_before']);
    return listOrders(s, principal, { ...rest, status: status === undefined ? undefined : [status].flat() });
  },
});

export const getOrderTool = defineTool({
  name: 'svc_get_order',
  title: 'Get an order',
  description:
    'One order with its lines (each with its inventory item_id) and status history, by order_id or order_number. Returns {order}.',
  scope: 'read',
  input: z
    .strictObject({ order_id: orderId.optional(), order_number: orderNumber.optional() })
    .refine((a) => !a.order_id !== !a.order_number, {
      path: ['order_id'],
      message: 'Give exactly one of order_id or order_number',
    }),
  output: z.object({ order: OrderWithItems }),
  records: 'orders',
  annotations: READ,
  run: async ({ s, principal }, { order_id, order_number }) => ({
    order: await getOrder(
      s,
      principal,
      order_id ? { id: order_id } : { order_number: order_number as string },
    ),
  }),
});

// The limits are the domain's (src/domain/inputs.ts); a model is told quantity and price plainly
// (zod's multipleOf and bounds stay checked, not shown).
offered(Quantity, { type: 'integer', minimum: 1 });
offered(Price, { type: 'number', minimum: 0, description: 'Default: the item’s price' });

export const createOrderTool = defineTool({
  name: 'svc_create_order',
  title: 'Create an order',
  description:
    'Record a customer order; delivery (default) needs address and phone_number. Numbers it, computes totals, links lines to inventory (else new draft items) and the customer to a contact (contact_id, email or phone, else new). Returns {order_number, order, warnings}.',
  scope: 'write',
  input: NewOrder,
  output: z.object({
    order_number: z.string(),
    order: OrderWithItems,
    warnings: z.array(z.object({ code: z.string(), message: z.string(), line: z.number().int().optional() })),
  }),
  records: 'orders',
  annotations: CREATE,
  run: ({ s, principal }, args) => createOrder(s, principal, args, 'mcp'),
});

export const updateOrderStatusTool = defineTool({
  name: 'svc_update_order_status',
  title: 'Move an order through its lifecycle',
  description: `Change an order's status, recording who and why (note). Moves: ${lifecycle}. Confirm reserves stock, cancel releases, ship consumes, return restocks. Returns {previous_status, changed, order}.`,
  scope: 'write',
  input: OrderStatusChange,
  output: z.object({
    previous_status: z.enum(ORDER_STATUSES),
    changed: z.boolean(),
    order: OrderWithItems,
  }),
  records: 'orders',
  annotations: UPDATE,
  run: ({ s, principal }, args) => updateOrderStatus(s, principal, args),
});

import { z } from 'zod';
import { createOrder } from '../../domain/order-create.ts';
import { ORDER_STATUSES, ORDER_TRANSITIONS } from '../../domain/order-lifecycle.ts';
import { getOrder, listOrders, updateOrderStatus } from '../../domain/orders.ts';
import { OrderSummary, OrderWithItems } from '../../domain/records.ts';
import { defineTool } from '../tool.ts';
import { cursor, limit, nextCursor, READ } from './common.ts';

const orderId = z.guid().describe('The order’s id (from svc_list_orders, svc_search or svc_create_order)');
const lifecycle = Object.entries(ORDER_TRANSITIONS)
  .map(([from, to]) => `${from} → ${to.join(' | ') || '(final)'}`)
  .join('; ');

export const listOrdersTool = defineTool({
  name: 'svc_list_orders',
  title: 'List orders',
  description:
    'Lists orders newest first, filtered by status, contact, creation date range or order number. Use it for questions like "what is still pending" or "orders of this customer this month". Returns compact orders (number, status, customer, total) and next_cursor.',
  scope: 'read',
  input: z.object({
    status: z
      .union([z.enum(ORDER_STATUSES), z.array(z.enum(ORDER_STATUSES)).max(7)])
      .optional()
      .describe('One status or a list of statuses'),
    contact_id: z.guid().optional().describe('Only orders of this contact'),
    order_number: z.string().max(40).optional().describe('An order number such as ORD-000042 (or just 42)'),
    created_after: z.iso
      .datetime({ offset: true })
      .or(z.iso.date())
      .optional()
      .describe('Created at or after (ISO 8601)'),
    created_before: z.iso
      .datetime({ offset: true })
      .or(z.iso.date())
      .optional()
      .describe('Created before (ISO 8601)'),
    limit: limit(),
    cursor: cursor(),
  }),
  output: z.object({ orders: z.array(OrderSummary), next_cursor: nextCursor() }),
  annotations: READ,
  run: ({ s, principal }, { status, ...rest }) =>
    listOrders(s, principal, { ...rest, status: status === undefined ? undefined : [status].flat() }),
});

export const getOrderTool = defineTool({
  name: 'svc_get_order',
  title: 'Get an order',
  description:
    'Returns one order with its line items (each with its linked inventory item_id) and its status history. Identify it by order_id or by order_number.',
  scope: 'read',
  input: z
    .object({
      order_id: orderId.optional(),
      order_number: z.string().max(40).optional().describe('e.g. ORD-000042'),
    })
    .refine((a) => !a.order_id !== !a.order_number, {
      path: ['order_id'],
      message: 'Give exactly one of order_id or order_number',
    }),
  output: z.object({ order: OrderWithItems }),
  annotations: READ,
  run: async ({ s, principal }, { order_id, order_number }) => ({
    order: await getOrder(
      s,
      principal,
      order_id ? { id: order_id } : { order_number: order_number as string },
    ),
  }),
});

const Line = z.object({
  item_id: z
    .guid()
    .optional()
    .describe('The inventory item, when known; otherwise matched by name, then SKU'),
  name: z.string().trim().min(1).max(300).describe('Product name as the customer ordered it'),
  sku: z.string().trim().min(1).max(100).optional().describe('SKU / item number, if known'),
  quantity: z.number().int().min(1).max(1_000_000),
  unit_price: z
    .number()
    .min(0)
    .max(9_999_999_999.99)
    .multipleOf(0.01)
    .optional()
    .describe('Price of one unit; defaults to the inventory item’s price'),
});

export const createOrderTool = defineTool({
  name: 'svc_create_order',
  title: 'Create an order',
  description:
    'Creates an order with its line items. The service assigns order_number (ORD-000001, …), computes the totals, links each line to an inventory item (by item_id, else by product name, else by SKU, else a new draft item flagged auto_created) and links the customer (contact_id, else a contact matched by email or phone, else a new contact). Returns order_number, the full order, and warnings for anything it could not link; linking never blocks the order.',
  scope: 'write',
  input: z.object({
    address: z.string().trim().min(1).max(2000).describe('Full delivery address'),
    phone_number: z.string().min(1).max(40).describe('Delivery / courier contact phone, with country code'),
    items: z.array(Line).min(1).max(200).describe('At least one line'),
    contact_id: z.guid().optional().describe('An existing contact; otherwise give the customer_* fields'),
    customer_name: z.string().trim().max(300).optional().describe('Customer’s full name'),
    customer_email: z.email().max(320).optional().describe('Customer’s email; matches an existing contact'),
    customer_phone: z
      .string()
      .max(40)
      .optional()
      .describe('Customer’s phone with country code; matches an existing contact'),
    notes: z.string().max(10_000).optional().describe('Anything staff should know about the order'),
    currency: z
      .string()
      .regex(/^[A-Za-z]{3}$/)
      .optional()
      .describe('ISO 4217 code such as USD or EUR (default USD)'),
  }),
  output: z.object({
    order_number: z.string(),
    order: OrderWithItems,
    warnings: z.array(z.object({ code: z.string(), message: z.string(), line: z.number().int().optional() })),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  run: ({ s, principal }, args) => createOrder(s, principal, args),
});

export const updateOrderStatusTool = defineTool({
  name: 'svc_update_order_status',
  title: 'Move an order through its lifecycle',
  description: `Changes an order's status and records who did it, when and why (note). Allowed moves: ${lifecycle}. Confirming reserves stock, cancelling releases it, shipping consumes it, returning restocks it. A move the lifecycle does not allow is refused with invalid_transition and the allowed next states; asking for the current status changes nothing.`,
  scope: 'write',
  input: z.object({
    order_id: orderId,
    status: z.enum(ORDER_STATUSES).describe('The new status'),
    note: z.string().max(2000).optional().describe('Why, e.g. "customer called to cancel"'),
  }),
  output: z.object({
    previous_status: z.enum(ORDER_STATUSES),
    changed: z.boolean(),
    order: OrderWithItems,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  run: ({ s, principal }, args) => updateOrderStatus(s, principal, args),
});

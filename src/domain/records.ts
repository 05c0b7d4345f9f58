import { z } from 'zod';
import { ORDER_STATUSES } from './order-lifecycle.ts';

// The records as every entry point returns them: MCP tools use these as output schemas and the
// svc://schema/* resources publish them as JSON Schema, so the two cannot drift apart. Column
// names are the tables' own (docs/decisions.md, "Core column names").

const id = () => z.guid();
const timestamp = (what: string) => z.string().describe(`${what} (ISO 8601, UTC)`);
const money = (what: string) => z.number().describe(`${what}, in the record's currency (2 decimals)`);
const text = () => z.string().nullable();

export const INVENTORY_STATUSES = ['active', 'draft', 'archived'] as const;

export const Contact = z
  .object({
    id: id(),
    organization_id: id(),
    first_name: text(),
    last_name: text(),
    email: text().describe('Lower-cased; unique within the organization'),
    phone: text().describe('E.164, e.g. +14155550123'),
    company: text(),
    job_title: text(),
    tags: z.array(z.string()),
    notes: text(),
    address: z.record(z.string(), z.unknown()).nullable().describe('Free-form postal address object'),
    source: z.string().describe('Where the contact came from: manual, mcp, order, whatsapp, shopify, …'),
    external_id: text(),
    whatsapp_id: text(),
    facebook_psid: text(),
    instagram_id: text(),
    created_at: timestamp('Created'),
    updated_at: timestamp('Last changed'),
  })
  .describe('A person or business the organization deals with');

export const ContactSummary = Contact.pick({
  id: true,
  first_name: true,
  last_name: true,
  email: true,
  phone: true,
  company: true,
  tags: true,
  created_at: true,
});

export const InventoryItem = z
  .object({
    id: id(),
    organization_id: id(),
    warehouse_id: id().nullable(),
    name: z.string(),
    sku: text().describe('Stock keeping unit; unique within the organization'),
    description: text(),
    unit_price: money('Price of one unit'),
    currency: z.string().describe('ISO 4217 code'),
    quantity_on_hand: z.number().int().describe('Units physically in stock'),
    quantity_reserved: z.number().int().describe('Units held by confirmed orders not yet shipped'),
    reorder_point: z.number().int().describe('Reorder when available stock falls to this level'),
    status: z.enum(INVENTORY_STATUSES).describe('draft items were auto-created from orders and await review'),
    auto_created: z.boolean().describe('Created automatically from an order line that matched no item'),
    created_at: timestamp('Created'),
    updated_at: timestamp('Last changed'),
  })
  .describe('A product or stock item');

export const InventorySummary = InventoryItem.pick({
  id: true,
  name: true,
  sku: true,
  status: true,
  unit_price: true,
  currency: true,
  quantity_on_hand: true,
  quantity_reserved: true,
  reorder_point: true,
  auto_created: true,
}).extend({ available: z.number().int().describe('on hand − reserved; negative means backordered') });

/** One item's stock as svc_check_stock reports it. */
export const StockLevel = z.object({
  item_id: id(),
  name: z.string(),
  sku: text(),
  status: z.enum(INVENTORY_STATUSES),
  warehouse_id: id().nullable(),
  quantity_on_hand: z.number().int(),
  quantity_reserved: z.number().int(),
  available: z.number().int().describe('on hand − reserved; negative when backordered'),
  backordered: z.number().int().describe('Units promised beyond what is on hand'),
  reorder_point: z.number().int(),
  needs_reorder: z.boolean().describe('available is at or below the reorder point'),
});

export const OrderItem = z
  .object({
    id: id(),
    order_id: id(),
    item_id: id().nullable().describe('The inventory item this line is linked to, if any'),
    name: z.string(),
    sku: text(),
    quantity: z.number().int().positive(),
    unit_price: money('Price of one unit'),
    total: money('quantity × unit_price'),
    auto_created: z.boolean().describe('The linked inventory item was created for this line as a draft'),
    line_number: z.number().int().nullable().describe('Position in the order as created (1, 2, …)'),
  })
  .describe('One line of an order');

export const OrderStatusEvent = z.object({
  from_status: z.enum(ORDER_STATUSES).nullable().describe('null for the order’s creation'),
  to_status: z.enum(ORDER_STATUSES),
  note: text(),
  actor: z.string().nullable().describe('agent:<key id>, user:<user id> or service'),
  created_at: timestamp('When'),
});

export const Order = z
  .object({
    id: id(),
    organization_id: id(),
    order_number: z.string().describe('ORD- and a six-digit sequence per organization, e.g. ORD-000042'),
    contact_id: id().nullable(),
    status: z.enum(ORDER_STATUSES),
    currency: z.string().describe('ISO 4217 code'),
    subtotal: money('Sum of the line totals'),
    discount_total: money('Discounts'),
    tax_total: money('Tax'),
    taxes_included: z.boolean().describe('Line prices include tax_total'),
    shipping_total: money('Shipping'),
    total: money('subtotal − discount_total + shipping_total + tax_total (unless taxes_included)'),
    fulfillment: z.enum(['delivery', 'pickup']).describe('A pickup has no shipping address or phone'),
    shipping_address: text(),
    shipping_phone_number: text(),
    customer_name: text(),
    customer_email: text(),
    customer_phone: text(),
    notes: text(),
    source: z.string(),
    external_id: text(),
    external_name: text().describe('The source’s own number, e.g. Shopify #1001'),
    created_at: timestamp('Created'),
    updated_at: timestamp('Last changed'),
  })
  .describe('A customer order; money is computed by the service from the lines');

export const OrderWithItems = Order.extend({
  items: z.array(OrderItem),
  status_history: z.array(OrderStatusEvent).describe('Every status change, oldest first'),
});

export const OrderSummary = Order.pick({
  id: true,
  order_number: true,
  status: true,
  contact_id: true,
  customer_name: true,
  total: true,
  currency: true,
  created_at: true,
}).extend({ item_count: z.number().int().describe('Number of lines') });

export const RecentOrder = OrderSummary.pick({
  id: true,
  order_number: true,
  status: true,
  total: true,
  currency: true,
  created_at: true,
});

export type ContactRecord = z.infer<typeof Contact>;
export type OrderRecord = z.infer<typeof OrderWithItems>;

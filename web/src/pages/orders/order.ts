import type { OrderStatus } from './lifecycle';

/** An order as /rest/v1 returns it (docs/data-model.md, `orders`). */
export type Order = {
  id: string;
  order_number: string;
  contact_id: string | null;
  status: OrderStatus;
  currency: string;
  subtotal: number;
  discount_total: number;
  shipping_total: number;
  tax_total: number;
  total: number;
  taxes_included: boolean;
  shipping_address: string | null;
  shipping_phone_number: string | null;
  fulfillment: 'delivery' | 'pickup';
  customer_name: string | null;
  customer_email: string | null;
  customer_phone: string | null;
  notes: string | null;
  source: string;
  created_at: string;
};

export type LinkedItem = { id: string; name: string; sku: string | null; status: string };

export type OrderLine = {
  id: string;
  item_id: string | null;
  name: string;
  sku: string | null;
  quantity: number;
  unit_price: number;
  total: number;
  auto_created: boolean;
  line_number: number | null;
  inventory_items: LinkedItem | null;
};

export type StatusEvent = {
  id: string;
  from_status: string | null;
  to_status: string;
  note: string | null;
  actor: string | null;
  created_at: string;
};

export type OrderContact = {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
};

export type FullOrder = Order & {
  contacts: OrderContact | null;
  order_items: OrderLine[];
  order_status_events: StatusEvent[];
};

export const LIST_COLUMNS =
  'id, order_number, status, currency, total, customer_name, created_at, contacts(id, first_name, last_name, email)';

export const FULL_COLUMNS =
  '*, contacts(id, first_name, last_name, email, phone), ' +
  'order_items(id, item_id, name, sku, quantity, unit_price, total, auto_created, line_number, inventory_items(id, name, sku, status)), ' +
  'order_status_events(id, from_status, to_status, note, actor, created_at)';

/**
 * What a person needs to know of a line's inventory link: nothing when it is linked to an item
 * (how the service matched it is its own business), that it is a new draft to review, or that
 * it is not linked at all (spec 2.3).
 */
export function linkNote(line: OrderLine): string | null {
  if (!line.inventory_items) return 'Not linked to inventory';
  return line.auto_created ? 'New draft item' : null;
}

/** Where an order came from, as the person reading it says it. */
export function originOf(source: string): string {
  const words: Record<string, string> = {
    function: 'entered in the dashboard',
    dashboard: 'entered in the dashboard',
    mcp: 'created by an AI agent',
    rest: 'created through the API',
    shopify: 'imported from Shopify',
    whatsapp: 'from WhatsApp',
    messenger: 'from Messenger',
    instagram: 'from Instagram',
  };
  return words[source] ?? `from ${source}`;
}

import { z } from 'zod';
import { parseLosslessJson } from '../platform/lossless-json.ts';

// Shopify's order webhook payload (the REST Admin API Order resource, as orders/create,
// orders/updated, orders/paid, orders/cancelled and orders/fulfilled all send it: the whole order
// as it stands) read into what this service keeps of an order. Ids are 64-bit integers: parsed
// losslessly and kept as strings. Money is kept as Shopify's decimal strings, in the shop's
// currency (`currency`; `presentment_currency` is the buyer's and is not used).

export const SHOPIFY_ORDER_TOPICS = [
  'orders/create',
  'orders/updated',
  'orders/paid',
  'orders/cancelled',
  'orders/fulfilled',
] as const;

export const isShopifyOrderTopic = (topic: string) =>
  (SHOPIFY_ORDER_TOPICS as readonly string[]).includes(topic);

const bigId = z.union([z.string().regex(/^\d{1,20}$/), z.number().int().nonnegative()]).transform(String);
const money = z
  .union([z.string(), z.number()])
  .transform(String)
  .pipe(z.string().regex(/^\d{1,10}(\.\d{1,2})?$/, 'a non-negative amount with at most 2 decimals'));
const text = z.string().nullish();
const shopMoney = z.object({ shop_money: z.object({ amount: money }) }).nullish();

const Address = z
  .object({
    name: text,
    first_name: text,
    last_name: text,
    company: text,
    address1: text,
    address2: text,
    city: text,
    province: text,
    province_code: text,
    zip: text,
    country: text,
    phone: text,
  })
  .nullish();

const Payload = z.object({
  id: bigId,
  name: text,
  created_at: z.string().datetime({ offset: true }).nullish(),
  updated_at: z.string().datetime({ offset: true }),
  currency: z.string().regex(/^[A-Za-z]{3}$/),
  email: text,
  contact_email: text,
  phone: text,
  note: text,
  financial_status: text,
  fulfillment_status: text,
  cancelled_at: text,
  cancel_reason: text,
  taxes_included: z.boolean().nullish(),
  total_price: money.nullish(),
  total_tax: money.nullish(),
  total_discounts: money.nullish(),
  total_shipping_price_set: shopMoney,
  shipping_lines: z.array(z.object({ price: money })).nullish(),
  customer: z
    .object({ id: bigId.nullish(), email: text, phone: text, first_name: text, last_name: text })
    .nullish(),
  shipping_address: Address,
  billing_address: Address,
  fulfillments: z.array(z.object({ shipment_status: text })).nullish(),
  line_items: z.array(
    z.object({
      id: bigId.nullish(),
      name: text,
      title: text,
      sku: text,
      quantity: z.number().int(),
      price: money,
    }),
  ),
});
type Payload = z.output<typeof Payload>;

/** Where the order stands in Shopify: cancelled, paid, fulfilled, shipments delivered. */
export type ShopifyLifecycle = Pick<
  Payload,
  'cancelled_at' | 'financial_status' | 'fulfillment_status' | 'fulfillments'
>;

export type ShopifyLine = { name: string; sku: string | null; quantity: number; unit_price: string };

export type ShopifyOrder = {
  id: string;
  /** The shop's name for the order, e.g. "#1001". */
  name: string | null;
  updated_at: string;
  currency: string;
  customer: {
    first_name: string | null;
    last_name: string | null;
    email: string | null;
    phone: string | null;
  };
  shipping_address: string | null;
  shipping_phone: string | null;
  note: string | null;
  lines: ShopifyLine[];
  tax_total: string;
  shipping_total: string;
  discount_total: string;
  taxes_included: boolean;
  /** What Shopify says the buyer was charged, to check our total against. */
  total_price: string | null;
  /** Shopify's fields the lifecycle status is read from (src/domain/shopify-orders.ts). */
  lifecycle: ShopifyLifecycle;
  /** Shopify's own words for that state, for status notes. */
  state: string;
};

const clean = (s: string | null | undefined) => {
  const t = s?.trim();
  return t ? t : null;
};

/** One line of text: the parts that are present, comma-separated. */
function addressLine(a: NonNullable<Payload['shipping_address']>): string | null {
  const person = clean(a.name) ?? clean([a.first_name, a.last_name].filter(Boolean).join(' '));
  const region = [clean(a.province_code) ?? clean(a.province), clean(a.zip)].filter(Boolean).join(' ');
  const parts = [person, a.company, a.address1, a.address2, a.city, region, a.country].map(clean);
  return parts.filter(Boolean).join(', ').slice(0, 2000) || null;
}

const sum = (amounts: string[]) =>
  (amounts.reduce((t, a) => t + Math.round(Number(a) * 100), 0) / 100).toFixed(2);

/**
 * The order in a Shopify order payload (the raw body), or the problems that make it not one.
 * Lines with no quantity left are skipped; names and SKUs are cut to this service's limits.
 */
export function readShopifyOrder(raw: string): { order: ShopifyOrder } | { problems: string[] } {
  let json: unknown;
  try {
    json = parseLosslessJson(raw);
  } catch {
    return { problems: ['the body is not JSON'] };
  }
  const parsed = Payload.safeParse(json);
  if (!parsed.success)
    return {
      problems: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || 'body'}: ${i.message}`),
    };
  const p = parsed.data;
  const shipping =
    p.total_shipping_price_set?.shop_money.amount ?? sum((p.shipping_lines ?? []).map((l) => l.price));
  const address = p.shipping_address ?? null;
  return {
    order: {
      id: p.id,
      name: clean(p.name)?.slice(0, 100) ?? null,
      updated_at: p.updated_at,
      currency: p.currency.toUpperCase(),
      customer: {
        first_name: clean(p.customer?.first_name) ?? clean(address?.first_name),
        last_name: clean(p.customer?.last_name) ?? clean(address?.last_name),
        email: clean(p.customer?.email) ?? clean(p.email) ?? clean(p.contact_email),
        phone:
          clean(p.customer?.phone) ??
          clean(p.phone) ??
          clean(address?.phone) ??
          clean(p.billing_address?.phone),
      },
      shipping_address: address ? addressLine(address) : null,
      shipping_phone: clean(address?.phone),
      note: clean(p.note)?.slice(0, 10000) ?? null,
      lines: p.line_items
        .filter((l) => l.quantity > 0)
        .map((l) => ({
          name: (clean(l.name) ?? clean(l.title) ?? 'Shopify item').slice(0, 300),
          sku: clean(l.sku)?.slice(0, 100) ?? null,
          quantity: l.quantity,
          unit_price: l.price,
        })),
      tax_total: p.total_tax ?? '0',
      shipping_total: shipping,
      discount_total: p.total_discounts ?? '0',
      taxes_included: p.taxes_included ?? false,
      total_price: p.total_price ?? null,
      lifecycle: {
        cancelled_at: p.cancelled_at,
        financial_status: p.financial_status,
        fulfillment_status: p.fulfillment_status,
        fulfillments: p.fulfillments,
      },
      state: [
        `financial_status ${p.financial_status ?? 'none'}`,
        `fulfillment_status ${p.fulfillment_status ?? 'none'}`,
        ...(p.cancelled_at ? [`cancelled${p.cancel_reason ? ` (${p.cancel_reason})` : ''}`] : []),
      ].join(', '),
    },
  };
}

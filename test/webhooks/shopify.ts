import { readFileSync } from 'node:fs';
import path from 'node:path';
import { shopifySignature } from '../../src/channels/shopify-signature.ts';
import { type FakeShopify, startFakeShopify } from '../../src/dev/fake-shopify/server.ts';
import { call, type Session } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// Shopify's side of the webhook tests: an order payload written from Shopify's Order resource as
// its order webhooks send it (test/fixtures/shopify), filled in as text so 64-bit ids stay exact,
// signed as Shopify signs (base64 HMAC-SHA256 of the bytes sent) and posted over real HTTP.

const DIR = path.join(import.meta.dirname, '..', 'fixtures', 'shopify');
// Templates, not JSON: their placeholders stand where numbers go (64-bit ids stay exact as text).
const read = (name: string) => readFileSync(path.join(DIR, `${name}.json.tmpl`), 'utf8');

/** Each placeholder of `text` replaced (every occurrence, longest first). */
function fill(text: string, values: Record<string, string>): string {
  let out = text;
  for (const key of Object.keys(values).sort((a, b) => b.length - a.length))
    out = out.split(key).join(values[key] as string);
  return out;
}

export type Line = {
  id?: string;
  name: string;
  sku: string | null;
  quantity: number;
  price: string;
  /** Line item properties as the storefront collected them (engravings, gift notes). */
  properties?: { name: string; value: string }[];
};

export const DEFAULT_LINES: Line[] = [
  { name: 'Red T-shirt - M', sku: 'TSHIRT-RED-M', quantity: 2, price: '19.99' },
  { name: 'Canvas tote', sku: 'TOTE-1', quantity: 1, price: '12.50' },
];

export type OrderOptions = {
  id: string;
  updatedAt?: string;
  name?: string;
  email?: string;
  phone?: string;
  financial?: string;
  fulfillment?: string | null;
  cancelledAt?: string | null;
  shipmentStatuses?: string[];
  lines?: Line[];
  discounts?: string;
  shipping?: string;
  tax?: string;
};

const cents = (amount: string) => Math.round(Number(amount) * 100);
const amount = (c: number) => (c / 100).toFixed(2);
const literal = (v: string | null) => (v === null ? 'null' : JSON.stringify(v));

/** An order webhook body; its totals add up the way Shopify's do. */
export function shopifyOrder(o: OrderOptions): string {
  const lines = o.lines ?? DEFAULT_LINES;
  const itemLines = lines.map((l, i) => {
    const [title, variant] = l.name.split(' - ');
    return fill(read('line-item'), {
      LINE_ID: l.id ?? `${o.id.slice(0, 10)}${String(i + 1).padStart(6, '0')}`,
      LINE_NAME: l.name,
      LINE_TITLE: title ?? l.name,
      VARIANT_TITLE: variant ?? '',
      SKU: literal(l.sku),
      QUANTITY: String(l.quantity),
      PRICE: l.price,
      PROPERTIES: JSON.stringify(l.properties ?? []),
    });
  });
  const lineItems = lines.reduce((t, l) => t + cents(l.price) * l.quantity, 0);
  const discounts = o.discounts ?? '5.00';
  const shipping = o.shipping ?? '4.99';
  const tax = o.tax ?? '3.80';
  const subtotal = lineItems - cents(discounts);
  const fulfillments = (o.shipmentStatuses ?? []).map((s, i) =>
    JSON.stringify({ id: 255858046 + i, status: 'success', shipment_status: s, tracking_company: 'USPS' }),
  );
  return fill(read('order'), {
    ORDER_ID: o.id,
    ORDER_NAME: o.name ?? '#1001',
    UPDATED_AT: o.updatedAt ?? '2026-11-20T10:15:03-05:00',
    EMAIL: o.email ?? 'jane.doe@example.test',
    PHONE: o.phone ?? '+1 207 555 0134',
    FINANCIAL_STATUS: o.financial ?? 'paid',
    FULFILLMENT_STATUS: literal(o.fulfillment ?? null),
    CANCELLED_AT: literal(o.cancelledAt ?? null),
    CANCEL_REASON: literal(o.cancelledAt ? 'customer' : null),
    CUSTOMER_ID: '207119551',
    SHOP_DOMAIN: SHOP,
    FULFILLMENTS: `[${fulfillments.join(',')}]`,
    LINE_ITEMS: `[${itemLines.join(',')}]`,
    TOTAL_LINE_ITEMS_PRICE: amount(lineItems),
    TOTAL_DISCOUNTS: discounts,
    SUBTOTAL_PRICE: amount(subtotal),
    SHIPPING_PRICE: shipping,
    TOTAL_TAX: tax,
    TOTAL_PRICE: amount(subtotal + cents(shipping) + cents(tax)),
  });
}

export const SHOP = 'jane-supplies.myshopify.com';
export const SHOP_SECRET = 'shpss_webhook_secret_for_tests';
export const SHOPIFY_ENV = { WORKER: 'off' };
/** The Shopify app the test service installs as (SHOPIFY_API_KEY / SHOPIFY_API_SECRET). */
export const SHOPIFY_APP = { apiKey: 'test-shopify-client-id', apiSecret: 'shpss_test_app_secret' };

const fakes = new WeakMap<TestService, FakeShopify>();

/**
 * The service with a fake Shopify behind SHOPIFY_SHOP_URL, the test app configured, and SHOP
 * known there with a custom app's token: pasted connects and installs are proven against it.
 */
export async function startShopifyService(env: Record<string, string> = {}) {
  const fake = await startFakeShopify({ app: SHOPIFY_APP });
  const svc = await startTestService({
    ...SHOPIFY_ENV,
    SHOPIFY_SHOP_URL: fake.shopUrl,
    SHOPIFY_API_KEY: SHOPIFY_APP.apiKey,
    SHOPIFY_API_SECRET: SHOPIFY_APP.apiSecret,
    SHOPIFY_TIMEOUT_MS: '2000',
    ...env,
  });
  fakes.set(svc, fake);
  return {
    svc,
    fake,
    stop: async () => {
      await svc.stop();
      await fake.close();
    },
  };
}

/** The custom-app token a shop's admin gives out at the fake (one per shop: tokens name their shop). */
export const shopToken = (shop: string) => `shpat_${shop.replace('.myshopify.com', '').replace(/-/g, '_')}`;

/**
 * Connects a Shopify shop to the session's organization with a pasted custom-app token and its
 * secret; its account id. With the service's fake Shopify, the shop and token exist there first.
 */
export async function connectShop(svc: TestService, s: Session, shop = SHOP, secret = SHOP_SECRET) {
  fakes.get(svc)?.setShop(shop, { owner: `owner@${shop}`, customApps: [{ token: shopToken(shop), secret }] });
  const r = await call(svc, 'POST', '/functions/v1/connected-accounts', {
    token: s.access_token,
    body: { provider: 'shopify', external_id: shop, access_token: shopToken(shop), webhook_secret: secret },
  });
  if (r.status !== 201) throw new Error(`connect failed: ${r.status} ${JSON.stringify(r.json)}`);
  return r.json.id as string;
}

let deliveries = 0;

/** Posts `body` as Shopify would: signed with the shop's secret unless `signature` says otherwise. */
export async function deliverShopify(
  svc: TestService,
  body: string,
  opts: {
    topic?: string;
    shop?: string | null;
    secret?: string;
    signature?: string | null;
    webhookId?: string | null;
  } = {},
) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-shopify-topic': opts.topic ?? 'orders/create',
    'x-shopify-api-version': '2026-10',
    'x-shopify-triggered-at': new Date().toISOString(),
  };
  const shop = opts.shop === undefined ? SHOP : opts.shop;
  if (shop !== null) headers['x-shopify-shop-domain'] = shop;
  const webhookId =
    opts.webhookId === undefined ? `b54557e4-${process.pid}-${Date.now()}-${++deliveries}` : opts.webhookId;
  if (webhookId !== null) headers['x-shopify-webhook-id'] = webhookId;
  const signature =
    opts.signature === undefined ? shopifySignature(body, opts.secret ?? SHOP_SECRET) : opts.signature;
  if (signature !== null) headers['x-shopify-hmac-sha256'] = signature;
  const res = await fetch(`${svc.url}/functions/v1/shopify-webhook`, { method: 'POST', headers, body });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON came back
  const json: any = text ? JSON.parse(text) : null;
  return { status: res.status, json };
}

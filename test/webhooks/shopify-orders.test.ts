// What the worker makes of Shopify's order webhooks: one order per Shopify order with its exact
// 64-bit id, the shop's name, money as Shopify states it, lines linked by SKU then name (or new
// draft items), the customer found or created; statuses walk the lifecycle (stock moving as it
// would) and a state it cannot reach is a note; deliveries in any order end in the newest state;
// an organization at its order ceiling waits, and a replay after an upgrade imports.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayEvents } from '../../src/domain/webhook-events.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import type { TestService } from '../helpers/service.ts';
import { countOf, processPending } from './meta.ts';
import {
  connectShop,
  deliverShopify,
  type OrderOptions,
  shopifyOrder,
  startShopifyService,
} from './shopify.ts';

let svc: TestService;
let stop: () => Promise<void>;
let owner: Session;
let org: string;
let seq = 0;
const orderId = () => `${820_982_911_946_154_000n + BigInt(process.pid * 1000 + ++seq)}`;

/** Delivers the order under `topic` and runs the worker over it. */
async function deliverAndProcess(o: OrderOptions, topic = 'orders/create') {
  const r = await deliverShopify(svc, shopifyOrder(o), { topic });
  expect(r.status).toBe(200);
  await processPending(svc);
}

/** The order as an owner reads it at /rest/v1, with its lines and status history. */
async function restOrder(externalId: string) {
  const r = await call(
    svc,
    'GET',
    `/rest/v1/orders?external_id=eq.${externalId}&select=*,order_items(name,sku,quantity,unit_price,item_id,auto_created),order_status_events(from_status,to_status,note,actor)`,
    { token: owner.access_token },
  );
  expect(r.status).toBe(200);
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON came back
  return r.json as Record<string, any>[];
}

const item = async (sku: string) =>
  (
    await svc.services.db.query<Record<string, unknown>>(
      'select id, name, status, auto_created, quantity_on_hand, quantity_reserved from inventory_items where organization_id = $1 and sku = $2',
      [org, sku],
    )
  )[0];

beforeAll(async () => {
  ({ svc, stop } = await startShopifyService());
  owner = await signUp(svc, 'Jane Supplies');
  org = orgOf(owner);
  await setPlan(svc, owner, 'growth');
  await connectShop(svc, owner);
  // The shop calls its shirt "Red T-shirt - M"; the catalogue here calls it otherwise, same SKU,
  // and has an older item by that name: the SKU decides.
  await svc.services.db.query(
    `insert into inventory_items (organization_id, name, sku, unit_price, quantity_on_hand, status)
     values ($1, 'T-shirt, red, medium', 'TSHIRT-RED-M', 19.99, 10, 'active'),
            ($1, 'Red T-shirt - M', 'OLD-SHIRT', 15.00, 0, 'active')`,
    [org],
  );
});
afterAll(async () => {
  await stop?.();
});

describe('orders/create', () => {
  it('imports the order with its exact id, the shop’s name, Shopify’s money, lines linked by SKU, and the customer', async () => {
    const id = orderId();
    await deliverAndProcess({ id, name: '#1042' });
    const [order] = await restOrder(id);
    expect(order).toMatchObject({
      source: 'shopify',
      external_id: id,
      external_name: '#1042',
      status: 'confirmed',
      currency: 'USD',
      subtotal: 52.48,
      discount_total: 5,
      shipping_total: 4.99,
      tax_total: 3.8,
      total: 56.27, // Shopify's total_price
      customer_name: 'Jane Doe',
      customer_email: 'jane.doe@example.test',
      customer_phone: '+12075550134',
      shipping_address: 'Jane Doe, 12 Harbour Street, Apt 3, Portland, ME 04101, United States',
      notes: 'Please leave the parcel with the neighbour at no. 12',
    });
    const shirt = await item('TSHIRT-RED-M');
    expect(order?.order_items).toEqual([
      {
        name: 'Red T-shirt - M',
        sku: 'TSHIRT-RED-M',
        quantity: 2,
        unit_price: 19.99,
        item_id: shirt?.id,
        auto_created: false,
      },
      expect.objectContaining({ name: 'Canvas tote', sku: 'TOTE-1', quantity: 1, auto_created: true }),
    ]);
    // Nothing here sold a tote before: a draft item waits for review.
    expect(await item('TOTE-1')).toMatchObject({ name: 'Canvas tote', status: 'draft', auto_created: true });
    // Paid means confirmed, and confirmed reserves the shirts.
    expect(shirt).toMatchObject({ quantity_on_hand: 10, quantity_reserved: 2 });
    expect(order?.order_status_events).toEqual([
      {
        from_status: null,
        to_status: 'pending',
        note: 'Imported from Shopify #1042 (orders/create)',
        actor: 'shopify',
      },
      {
        from_status: 'pending',
        to_status: 'confirmed',
        note: 'Shopify #1042 (orders/create): financial_status paid, fulfillment_status none',
        actor: 'shopify',
      },
    ]);
    const contacts = await svc.services.db.query<Record<string, unknown>>(
      "select first_name, last_name, phone, source from contacts where organization_id = $1 and email = 'jane.doe@example.test'",
      [org],
    );
    expect(contacts).toEqual([
      { first_name: 'Jane', last_name: 'Doe', phone: '+12075550134', source: 'shopify' },
    ]);
    // The same customer's next order finds the contact instead of making another.
    await deliverAndProcess({ id: orderId(), name: '#1043' });
    expect(
      await countOf(svc, "contacts where organization_id = $1 and email = 'jane.doe@example.test'", [org]),
    ).toBe(1);
  });

  it('keeps tax-inclusive prices as the shop charged them, and notes a total it cannot make up (a tip)', async () => {
    const id = orderId();
    const body = shopifyOrder({ id, name: '#2001', tax: '2.00' })
      .replace('"taxes_included": false', '"taxes_included": true')
      .replace(/"total_price": "[\d.]+"/, '"total_price": "57.47"'); // 52.48 − 5 + 4.99 + a 5.00 tip
    expect((await deliverShopify(svc, body)).status).toBe(200);
    await processPending(svc);
    const [order] = await restOrder(id);
    expect(order).toMatchObject({ taxes_included: true, tax_total: 2, total: 52.47 });
    expect(order?.order_status_events.at(-1)).toMatchObject({
      actor: 'shopify',
      note: expect.stringContaining(
        'Shopify charged 57.47 USD; the lines, discounts, shipping and tax kept here make 52.47',
      ),
    });
  });
});

describe('later deliveries', () => {
  it('orders/fulfilled then a refund walk the lifecycle; stock is reserved, consumed and restocked', async () => {
    const id = orderId();
    await deliverAndProcess({ id, name: '#3001', updatedAt: '2026-11-20T10:00:00Z' });
    const reserved = Number((await item('TSHIRT-RED-M'))?.quantity_reserved);
    const onHand = Number((await item('TSHIRT-RED-M'))?.quantity_on_hand);
    await deliverAndProcess(
      {
        id,
        name: '#3001',
        updatedAt: '2026-11-21T09:00:00Z',
        fulfillment: 'fulfilled',
        shipmentStatuses: ['in_transit'],
      },
      'orders/fulfilled',
    );
    expect((await restOrder(id))[0]?.status).toBe('shipped');
    expect(await item('TSHIRT-RED-M')).toMatchObject({
      quantity_on_hand: onHand - 2,
      quantity_reserved: reserved - 2,
    });
    await deliverAndProcess(
      {
        id,
        name: '#3001',
        updatedAt: '2026-11-23T09:00:00Z',
        fulfillment: 'fulfilled',
        financial: 'refunded',
      },
      'orders/updated',
    );
    const [order] = await restOrder(id);
    expect(order?.status).toBe('returned');
    expect(order?.order_status_events.map((e: { to_status: string }) => e.to_status)).toEqual([
      'pending',
      'confirmed',
      'processing',
      'shipped',
      'returned',
    ]);
    expect(await item('TSHIRT-RED-M')).toMatchObject({
      quantity_on_hand: onHand,
      quantity_reserved: reserved - 2,
    });
    expect(await countOf(svc, 'orders where external_id = $1', [id])).toBe(1);
  });

  it('an orders/updated that overtook orders/create: one order, in the newer state; the older delivery changes nothing', async () => {
    const id = orderId();
    await deliverAndProcess(
      {
        id,
        name: '#4001',
        updatedAt: '2026-11-22T12:00:00Z',
        fulfillment: 'fulfilled',
        shipmentStatuses: ['delivered'],
      },
      'orders/updated',
    );
    await deliverAndProcess({ id, name: '#4001', updatedAt: '2026-11-22T11:00:00Z', financial: 'pending' });
    const orders = await restOrder(id);
    expect(orders).toHaveLength(1);
    expect(orders[0]).toMatchObject({
      status: 'delivered',
      external_updated_at: '2026-11-22T12:00:00+00:00',
    });
    const [late] = await svc.services.db.query<{ status: string; last_error: string }>(
      "select e.status, e.last_error from app.webhook_events e where e.topic = 'orders/create' order by received_at desc limit 1",
    );
    expect(late?.status).toBe('ignored');
    expect(late?.last_error).toMatch(/older than the Shopify update already applied/);
  });

  it('a cancellation the lifecycle cannot make (the order shipped) is a status note; the order stays shipped', async () => {
    const id = orderId();
    await deliverAndProcess({
      id,
      name: '#5001',
      updatedAt: '2026-11-20T10:00:00Z',
      fulfillment: 'fulfilled',
    });
    await deliverAndProcess(
      {
        id,
        name: '#5001',
        updatedAt: '2026-11-21T10:00:00Z',
        fulfillment: 'fulfilled',
        financial: 'voided',
        cancelledAt: '2026-11-21T10:00:00Z',
      },
      'orders/cancelled',
    );
    const [order] = await restOrder(id);
    expect(order?.status).toBe('shipped');
    expect(order?.order_status_events.at(-1)).toEqual({
      from_status: 'shipped',
      to_status: 'shipped',
      actor: 'shopify',
      note: expect.stringContaining('which the lifecycle cannot reach from shipped; the order stays shipped'),
    });
    const [event] = await svc.services.db.query<{ status: string }>(
      "select status from app.webhook_events where topic = 'orders/cancelled' order by received_at desc limit 1",
    );
    expect(event?.status).toBe('processed');
  });

  it('lines edited in Shopify replace a pending order’s lines; a confirmed order keeps its lines and says so', async () => {
    const pending = orderId();
    await deliverAndProcess({ id: pending, updatedAt: '2026-11-20T10:00:00Z', financial: 'pending' });
    await deliverAndProcess(
      {
        id: pending,
        updatedAt: '2026-11-20T11:00:00Z',
        financial: 'pending',
        lines: [{ name: 'Canvas tote', sku: 'TOTE-1', quantity: 3, price: '12.50' }],
      },
      'orders/updated',
    );
    const [edited] = await restOrder(pending);
    expect(edited?.order_items).toEqual([expect.objectContaining({ sku: 'TOTE-1', quantity: 3 })]);
    expect(edited?.subtotal).toBe(37.5);

    const confirmed = orderId();
    await deliverAndProcess({ id: confirmed, updatedAt: '2026-11-20T10:00:00Z' });
    await deliverAndProcess(
      {
        id: confirmed,
        updatedAt: '2026-11-20T11:00:00Z',
        lines: [{ name: 'Canvas tote', sku: 'TOTE-1', quantity: 3, price: '12.50' }],
      },
      'orders/updated',
    );
    const [kept] = await restOrder(confirmed);
    expect(kept?.order_items).toHaveLength(2);
    expect(kept?.order_status_events.at(-1).note).toMatch(/a confirmed order keeps its lines/);
  });
});

describe('plan ceilings', () => {
  it('an organization at its monthly orders: the event is rejected and nothing is written; a replay after an upgrade imports it', async () => {
    const full = await signUp(svc, 'Full shop');
    const fullOrg = orgOf(full);
    const shop = `full-${process.pid}.myshopify.com`;
    await connectShop(svc, full, shop, 'full-secret');
    await svc.services.db.query(
      "insert into orders (organization_id, source) select $1, 'manual' from generate_series(1, 25)",
      [fullOrg],
    );
    const id = orderId();
    const r = await deliverShopify(svc, shopifyOrder({ id }), { shop, secret: 'full-secret' });
    expect(r.status).toBe(200);
    await processPending(svc);
    const [rejected] = await svc.services.db.query<{ id: string; status: string; last_error: string }>(
      'select id, status, last_error from app.webhook_events where organization_id = $1',
      [fullOrg],
    );
    expect(rejected?.status).toBe('rejected');
    expect(rejected?.last_error).toMatch(/orders/);
    expect(await countOf(svc, 'orders where external_id = $1', [id])).toBe(0);
    expect(await countOf(svc, 'contacts where organization_id = $1', [fullOrg])).toBe(0);

    await setPlan(svc, full, 'growth');
    expect(await replayEvents(svc.services.db, svc.services.queue, { failed: true })).toContain(rejected?.id);
    await processPending(svc);
    expect(await countOf(svc, 'orders where organization_id = $1 and external_id = $2', [fullOrg, id])).toBe(
      1,
    );
  });
});

describe('phone numbers', () => {
  it('a phone the shop holds in national form is stored in E.164, read with the organization’s country', async () => {
    await svc.services.db.query("update organizations set country = 'US' where id = $1", [org]);
    const id = orderId();
    await deliverAndProcess({ id, name: '#1043', email: 'national@example.test', phone: '(207) 555-0199' });
    const [order] = await restOrder(id);
    expect(order).toMatchObject({ customer_phone: '+12075550199', shipping_phone_number: '+12075550199' });
    await svc.services.db.query('update organizations set country = null where id = $1', [org]);
  });
});

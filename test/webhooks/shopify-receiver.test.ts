// Shopify's receiver: the shop's secret verifies the raw bytes (a byte changed, a signature of the
// re-serialized JSON, a missing header, another shop's secret and an unknown shop are all the same
// 401, with nothing stored); order topics must carry an order; a redelivery (same webhook id) and a
// replay of the signed body under a fresh webhook id are stored once; a 2 MB order of 250 lines is answered before any importing; each shop's
// deliveries land in its own organization only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopifySignature } from '../../src/channels/shopify-signature.ts';
import { orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import type { TestService } from '../helpers/service.ts';
import { countOf, processPending } from './meta.ts';
import {
  connectShop,
  deliverShopify,
  type Line,
  SHOP,
  SHOP_SECRET,
  shopifyOrder,
  startShopifyService,
} from './shopify.ts';

let svc: TestService;
let stop: () => Promise<void>;
let owner: Session;
let seq = 0;
// Shopify's ids are 64-bit: above 2^53, where a JSON number would lose its last digits.
const orderId = () => `${5_940_139_491_234_000_000n + BigInt(process.pid * 1000 + ++seq)}`;

const stored = () => countOf(svc, 'app.webhook_deliveries where provider = $1', ['shopify']);

beforeAll(async () => {
  ({ svc, stop } = await startShopifyService());
  owner = await signUp(svc, 'Jane Supplies');
  await setPlan(svc, owner, 'growth');
  await connectShop(svc, owner);
});
afterAll(async () => {
  await stop?.();
});

describe('signature', () => {
  it('accepts the exact bytes signed with the shop’s secret: 200 {received: true}, one event stored', async () => {
    const before = await stored();
    const r = await deliverShopify(svc, shopifyOrder({ id: orderId() }));
    expect(r).toEqual({ status: 200, json: { received: true } });
    expect(await stored()).toBe(before + 1);
    const [event] = await svc.services.db.query<Record<string, unknown>>(
      'select provider, topic, status, organization_id from app.webhook_events order by received_at desc limit 1',
    );
    expect(event).toEqual({
      provider: 'shopify',
      topic: 'orders/create',
      status: 'pending',
      organization_id: orgOf(owner),
    });
  });

  it('refuses a changed byte, the re-serialized JSON’s signature, a missing header, another secret and an unknown shop alike: 401, nothing stored', async () => {
    const body = shopifyOrder({ id: orderId() });
    const before = await stored();
    const attempts = [
      deliverShopify(svc, body.replace('"Jane"', '"Jone"'), {
        signature: shopifySignature(body, SHOP_SECRET),
      }),
      deliverShopify(svc, body, {
        signature: shopifySignature(JSON.stringify(JSON.parse(body)), SHOP_SECRET),
      }),
      deliverShopify(svc, body, { signature: null }),
      deliverShopify(svc, body, { signature: 'not base64!' }),
      deliverShopify(svc, body, { secret: 'another-apps-secret' }),
      deliverShopify(svc, body, { shop: 'not-connected.myshopify.com' }),
      deliverShopify(svc, body, { shop: null }),
    ];
    const answers = await Promise.all(attempts);
    for (const r of answers) {
      expect(r.status).toBe(401);
      expect(r.json).toEqual({
        error: 'unauthorized',
        message: 'The request is not signed by a connected Shopify shop',
        details: {},
      });
    }
    expect(await stored()).toBe(before);
  });

  it('reads the shop domain in any case, as Shopify may send it', async () => {
    const r = await deliverShopify(svc, shopifyOrder({ id: orderId() }), { shop: SHOP.toUpperCase() });
    expect(r.status).toBe(200);
  });
});

describe('what is stored', () => {
  it('an order topic whose body is no order, or a missing topic, is 400 and nothing is stored', async () => {
    const before = await stored();
    const notOrder = await deliverShopify(svc, '{"id": 1, "title": "A product"}');
    expect(notOrder.status).toBe(400);
    expect(notOrder.json.error).toBe('validation_error');
    expect(notOrder.json.message).toBe('The body is not a Shopify order');
    expect(JSON.stringify(notOrder.json.details.issues)).toMatch(/updated_at|line_items|currency/);
    const noJson = await deliverShopify(svc, 'id=1');
    expect(noJson).toMatchObject({ status: 400, json: { message: 'The body is not JSON' } });
    const noTopic = await deliverShopify(svc, shopifyOrder({ id: orderId() }), { topic: '' });
    expect(noTopic.status).toBe(400);
    expect(await stored()).toBe(before);
  });

  it('a redelivery with the same X-Shopify-Webhook-Id is stored once and makes one order', async () => {
    const id = orderId();
    const body = shopifyOrder({ id });
    const webhookId = `dup-${id}`;
    const before = await stored();
    const answers = await Promise.all([1, 2, 3].map(() => deliverShopify(svc, body, { webhookId })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await stored()).toBe(before + 1);
    await processPending(svc);
    expect(await countOf(svc, "orders where source = 'shopify' and external_id = $1", [id])).toBe(1);
  });

  it('a captured delivery replayed with a fresh X-Shopify-Webhook-Id (or another order topic) is answered 200 and stored once', async () => {
    // Neither header is covered by the signature: only the signed bytes say what was delivered.
    const id = orderId();
    const body = shopifyOrder({ id });
    const before = await stored();
    const first = await deliverShopify(svc, body, { webhookId: `original-${id}` });
    const replays = await Promise.all([
      deliverShopify(svc, body, { webhookId: `replayed-${id}` }),
      deliverShopify(svc, body, { webhookId: null }),
      deliverShopify(svc, body, { webhookId: `again-${id}`, topic: 'orders/updated' }),
    ]);
    for (const r of [first, ...replays]) expect(r).toEqual({ status: 200, json: { received: true } });
    expect(await stored()).toBe(before + 1);
    expect(await countOf(svc, 'app.webhook_deliveries where payload = $1', [body])).toBe(1);
    await processPending(svc);
    expect(await countOf(svc, "orders where source = 'shopify' and external_id = $1", [id])).toBe(1);
    // A changed order (a new updated_at) is a new delivery.
    const changed = await deliverShopify(svc, shopifyOrder({ id, updatedAt: '2026-11-21T09:00:00-05:00' }), {
      topic: 'orders/updated',
    });
    expect(changed.status).toBe(200);
    expect(await stored()).toBe(before + 2);
  });

  it('another topic is kept and marked ignored by the worker', async () => {
    const r = await deliverShopify(svc, '{"id": 690933842, "name": "Jane Supplies"}', {
      topic: 'shop/update',
    });
    expect(r.status).toBe(200);
    await processPending(svc);
    const [event] = await svc.services.db.query<{ status: string }>(
      "select status from app.webhook_events where topic = 'shop/update'",
    );
    expect(event?.status).toBe('ignored');
  });

  it('a 2 MB order of 250 lines is acknowledged with nothing imported yet; the worker then imports every line', async () => {
    const id = orderId();
    const engraving = 'x'.repeat(8000);
    const lines: Line[] = Array.from({ length: 250 }, (_, i) => ({
      name: `Engraved plate ${i + 1}`,
      sku: `PLATE-${i + 1}`,
      quantity: 1 + (i % 3),
      price: '7.25',
      properties: [{ name: 'Engraving', value: engraving }],
    }));
    const body = shopifyOrder({ id, lines, discounts: '0.00' });
    expect(Buffer.byteLength(body)).toBeGreaterThan(2 * 1024 * 1024);
    const r = await deliverShopify(svc, body);
    expect(r.status).toBe(200);
    // The answer came before the import: the receiver only stores (the worker is off here).
    expect(await countOf(svc, 'orders where external_id = $1', [id])).toBe(0);
    await processPending(svc);
    const [order] = await svc.services.db.query<Record<string, unknown>>(
      `select o.subtotal::text, (select count(*)::int from order_items i where i.order_id = o.id) as lines
         from orders o where o.external_id = $1`,
      [id],
    );
    // 250 lines of 1, 2 and 3 plates (84 + 83 + 83) at 7.25.
    expect(order).toEqual({ lines: 250, subtotal: ((84 * 1 + 83 * 2 + 83 * 3) * 7.25).toFixed(2) });
  });
});

describe('tenants', () => {
  it('routes each shop to its own organization; another shop’s secret cannot sign for it', async () => {
    const other = await signUp(svc, 'Other shop');
    await setPlan(svc, other, 'growth');
    const otherShop = `other-${process.pid}.myshopify.com`;
    await connectShop(svc, other, otherShop, 'other-shops-secret');
    const id = orderId();
    const body = shopifyOrder({ id });
    expect((await deliverShopify(svc, body, { shop: otherShop })).status).toBe(401); // signed with SHOP's secret
    expect((await deliverShopify(svc, body, { shop: otherShop, secret: 'other-shops-secret' })).status).toBe(
      200,
    );
    await processPending(svc);
    const rows = await svc.services.db.query<{ organization_id: string }>(
      'select organization_id from orders where external_id = $1',
      [id],
    );
    expect(rows).toEqual([{ organization_id: orgOf(other) }]);
  });
});

import { createRoute, z } from '@hono/zod-openapi';
import { bodyDigest } from '../channels/meta-signature.ts';
import { isShopifyOrderTopic, readShopifyOrder } from '../channels/shopify-order.ts';
import { verifyShopifySignature } from '../channels/shopify-signature.ts';
import { claimsOf } from '../domain/connected-accounts.ts';
import { storeDelivery } from '../domain/webhook-events.ts';
import { unauthorized, validationError } from '../platform/errors.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { limitWebhooks, readJson } from './webhook-receiver.ts';

// Shopify's webhook receiver (docs/webhooks.md "Shopify"). The shop (X-Shopify-Shop-Domain)
// picks its connected account, whose webhook_secret verifies X-Shopify-Hmac-Sha256 over the raw
// bytes; an unknown shop and a bad signature get the same 401, so a forger cannot tell which shops
// are connected. Order topics are checked to be orders before anything is stored; every verified
// delivery is stored once per (shop, X-Shopify-Webhook-Id) and answered at once, well inside
// Shopify's 5 seconds whatever the order's size: the worker imports it.

const route = createRoute({
  method: 'post',
  path: '/shopify-webhook',
  summary: 'Shopify webhook delivery (orders/create, updated, paid, cancelled, fulfilled)',
  description:
    'Signed with X-Shopify-Hmac-Sha256 (base64 HMAC-SHA256 of the raw body with the shop’s webhook_secret); ' +
    'X-Shopify-Shop-Domain names a connected shopify account. Deduplicated on X-Shopify-Webhook-Id, stored and ' +
    'answered at once; the worker imports the order (source shopify, external_id the Shopify id).',
  responses: {
    200: jsonResponse(z.object({ received: z.literal(true) }), 'Received'),
    ...errorResponses(400, 401, 413, 429),
  },
});

const NOT_SIGNED = 'The request is not signed by a connected Shopify shop';
// Verified against when the shop is unknown, so both refusals take the same work.
const DECOY_SECRET = 'no-such-shop';

export function shopifyWebhook(s: Services) {
  const limit = limitWebhooks(s);
  return newRouter().openapi(route, async (c) => {
    await limit(c);
    const raw = new Uint8Array(await c.req.arrayBuffer());
    const shop = c.req.header('x-shopify-shop-domain')?.trim().toLowerCase() ?? '';
    // Several organizations may claim one shop; the delivery belongs to the claim whose secret
    // signed it (newest proof first), so a claim with someone else's secret never takes it.
    const claims = shop ? await claimsOf(s, 'shopify', shop) : [];
    const hmac = c.req.header('x-shopify-hmac-sha256');
    const account = claims.find(
      (a) => a.webhook_secret && verifyShopifySignature(raw, hmac, a.webhook_secret),
    );
    if (!claims.length) verifyShopifySignature(raw, hmac, DECOY_SECRET);
    if (!account) throw unauthorized(NOT_SIGNED);

    const topic = c.req.header('x-shopify-topic')?.trim() ?? '';
    if (!/^[a-z_]+\/[a-z_]+$/.test(topic))
      throw validationError([{ path: 'X-Shopify-Topic', message: 'Expected a topic such as orders/create' }]);
    const { text } = readJson(raw);
    if (isShopifyOrderTopic(topic)) {
      const read = readShopifyOrder(text);
      if ('problems' in read)
        throw validationError(
          read.problems.map((message) => ({ path: 'body', message })),
          'The body is not a Shopify order',
        );
    }
    // Shopify sends the same id on every retry of a delivery; the body's digest stands in without it.
    const webhookId = c.req.header('x-shopify-webhook-id')?.trim().slice(0, 200) || bodyDigest(raw);
    const stored = await storeDelivery(s.db, s.queue, {
      provider: 'shopify',
      deliveryId: `${shop}:${webhookId}`.slice(0, 255),
      topic,
      payload: text,
      accounts: [{ organization_id: account.organization_id, id: account.id }],
    });
    c.get('log').info(
      { topic, duplicate: stored.duplicate, events: stored.events },
      'shopify delivery stored',
    );
    return c.json({ received: true as const }, 200);
  });
}

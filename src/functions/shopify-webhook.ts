import { createHash } from 'node:crypto';
import { createRoute, z } from '@hono/zod-openapi';
import { isShopifyOrderTopic, readShopifyOrder } from '../channels/shopify-order.ts';
import { verifyShopifySignature } from '../channels/shopify-signature.ts';
import { claimsOf } from '../domain/connected-accounts.ts';
import { storeDelivery } from '../domain/webhook-events.ts';
import { unauthorized, validationError } from '../platform/errors.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { limitWebhooks, readJson } from './webhook-receiver.ts';

// Shopify's webhook receiver (docs/webhooks.md "Shopify"). The shop (X-Shopify-Shop-Domain)
// picks its connected account; X-Shopify-Hmac-Sha256 over the raw bytes is verified with the
// account's own webhook_secret (a custom app's, pasted with its token) or, for a shop that
// installed the app through OAuth, with the app's secret (SHOPIFY_API_SECRET). An unknown shop and
// a bad signature get the same 401, so a forger cannot tell which shops are connected. Order topics
// are checked to be orders before anything is stored. A delivery is stored once per shop, topic
// and signed body: Shopify's X-Shopify-Webhook-Id is not covered by the signature, so a replay of
// a captured delivery with a fresh id is the same delivery. It is answered at once, well inside
// Shopify's 5 seconds whatever the order's size: the worker imports it.

const route = createRoute({
  method: 'post',
  path: '/shopify-webhook',
  summary: 'Shopify webhook delivery (orders/create, updated, paid, cancelled, fulfilled)',
  description:
    'Signed with X-Shopify-Hmac-Sha256 (base64 HMAC-SHA256 of the raw body with the shop’s webhook_secret, or ' +
    'SHOPIFY_API_SECRET for a shop that installed the app); ' +
    'X-Shopify-Shop-Domain names a connected shopify account. Deduplicated on the shop, topic and signed body ' +
    '(X-Shopify-Webhook-Id is not signed, so a replay with a new one is the same delivery), stored and ' +
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
    // signed it (newest proof first), so a claim with someone else's secret never takes it. A shop
    // installed through OAuth has no secret of its own: the app's signs its deliveries.
    const claims = shop ? await claimsOf(s, 'shopify', shop) : [];
    const hmac = c.req.header('x-shopify-hmac-sha256');
    const account = claims.find((a) => {
      const secret = a.webhook_secret ?? s.config.shopify.apiSecret;
      return secret !== undefined && verifyShopifySignature(raw, hmac, secret);
    });
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
    // What the signature covers decides sameness: a Shopify retry (same body, same id) and a
    // replay under a new, unsigned X-Shopify-Webhook-Id or X-Shopify-Topic are this delivery again.
    // Every order topic carries the whole order as it stands and is imported by its content, so
    // identical order bodies are one order state whatever the topic: storing one loses nothing.
    const webhookId = c.req.header('x-shopify-webhook-id')?.trim().slice(0, 200) || null;
    const stored = await storeDelivery(s.db, s.queue, {
      provider: 'shopify',
      deliveryId: signedDeliveryId(shop, topic, raw),
      topic,
      payload: text,
      accounts: [{ organization_id: account.organization_id, id: account.id }],
    });
    c.get('log').info(
      { topic, webhook_id: webhookId, duplicate: stored.duplicate, events: stored.events },
      'shopify delivery stored',
    );
    return c.json({ received: true as const }, 200);
  });
}

/**
 * The inbox key of a verified delivery: the shop and the SHA-256 of its signed bytes, under the
 * topic ('orders' for every order topic: the topic header is not signed either).
 */
export const signedDeliveryId = (shop: string, topic: string, raw: Uint8Array) => {
  const kind = isShopifyOrderTopic(topic) ? 'orders' : topic;
  return `${shop}:${createHash('sha256').update(kind).update('\n').update(raw).digest('hex')}`;
};

import { createRoute, z } from '@hono/zod-openapi';
import { bodyDigest, sameSecret, verifyMetaSignature } from '../channels/meta-signature.ts';
import { asMetaDelivery, metaRoutes } from '../channels/meta-webhook.ts';
import { metaDeliveryStore } from '../domain/meta-delivery-store.ts';
import { forbidden, notFound, unauthorized, validationError } from '../platform/errors.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { limitWebhooks, readJson } from './webhook-receiver.ts';

// Meta's webhook receiver (docs/webhooks.md), mounted as whatsapp-webhook and meta-webhook: the
// subscription handshake (GET) and deliveries (POST) for WhatsApp, Messenger and Instagram.
// Public, verified by Meta's signature over the raw bytes. A delivery is verified, routed to
// connected accounts, stored with its jobs in one transaction and answered at once; the worker
// processes it (src/jobs/process-webhook-event.ts). Never logs a body, a signature or a token.

const NAMES = ['whatsapp-webhook', 'meta-webhook'] as const;

const handshake = (name: string) =>
  createRoute({
    method: 'get',
    path: `/${name}`,
    summary: 'Meta webhook subscription handshake',
    description:
      'Answers hub.challenge as text when hub.mode is subscribe and hub.verify_token is WHATSAPP_VERIFY_TOKEN. 404 when the receiver is not configured.',
    responses: {
      200: { description: 'The challenge', content: { 'text/plain': { schema: z.string() } } },
      ...errorResponses(403, 404, 429),
    },
  });

const delivery = (name: string) =>
  createRoute({
    method: 'post',
    path: `/${name}`,
    summary: 'Meta webhook delivery (WhatsApp, Messenger, Instagram)',
    description:
      'Signed with X-Hub-Signature-256 (HMAC-SHA256 of the raw body with META_APP_SECRET). Stored and answered at once; processed by the worker.',
    responses: {
      200: jsonResponse(z.object({ received: z.literal(true) }), 'Received'),
      ...errorResponses(400, 401, 404, 413, 429),
    },
  });

export function whatsappWebhook(s: Services) {
  const app = newRouter();
  const limit = limitWebhooks(s);
  const deliveries = metaDeliveryStore(s.db, s.queue);
  for (const name of NAMES) {
    app.openapi(handshake(name), async (c) => {
      const { appSecret, verifyToken } = s.config.meta;
      if (!appSecret || !verifyToken) throw notFound('receiver');
      await limit(c);
      const mode = c.req.query('hub.mode');
      const token = c.req.query('hub.verify_token');
      const challenge = c.req.query('hub.challenge');
      if (
        mode !== 'subscribe' ||
        token === undefined ||
        challenge === undefined ||
        !sameSecret(token, verifyToken)
      )
        throw forbidden('The verification failed');
      return c.text(challenge, 200);
    });
    app.openapi(delivery(name), async (c) => {
      const { appSecret, verifyToken } = s.config.meta;
      if (!appSecret || !verifyToken) throw notFound('receiver');
      await limit(c);
      // The bytes as sent: the signature covers them, not any re-serialization of their JSON.
      const raw = new Uint8Array(await c.req.arrayBuffer());
      // One message for every refusal: a forger learns nothing about which part was wrong.
      if (!verifyMetaSignature(raw, c.req.header('x-hub-signature-256'), appSecret))
        throw unauthorized('The request is not signed by Meta');
      const { text, json: parsed } = readJson(raw);
      const d = asMetaDelivery(parsed);
      if (!d)
        throw validationError(
          [
            {
              path: 'object',
              message: 'Expected whatsapp_business_account, page or instagram with an entry array',
            },
          ],
          'The body is not a Meta webhook delivery',
        );
      const log = c.get('log');
      const routes = metaRoutes(d);
      if (routes.length) {
        const stored = await deliveries.store({
          deliveryId: bodyDigest(raw),
          topic: d.object,
          payload: text,
          routes,
        });
        // Acknowledged all the same, or Meta retries and finally disables the subscription.
        for (const i of stored.unrouted) {
          const route = routes[i];
          log.warn(
            { provider: route?.provider, external_id: route?.externalId },
            'webhook for an unknown account',
          );
        }
        if (stored.duplicate || stored.events.length)
          log.info(
            { object: d.object, duplicate: stored.duplicate, events: stored.events },
            'webhook delivery stored',
          );
      }
      return c.json({ received: true as const }, 200);
    });
  }
  return app;
}

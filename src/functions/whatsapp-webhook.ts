import { createRoute, z } from '@hono/zod-openapi';
import { bodyDigest, sameSecret, verifyMetaSignature } from '../channels/meta-signature.ts';
import { asMetaDelivery, metaRoutes } from '../channels/meta-webhook.ts';
import { receiveMeta } from '../domain/webhook-inbox.ts';
import { forbidden, notFound, unauthorized, validationError } from '../platform/errors.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { limitWebhooks, readJson } from './webhook-receiver.ts';

// Meta's webhook receiver (docs/webhooks.md), mounted as whatsapp-webhook and meta-webhook: the
// subscription handshake (GET) and deliveries (POST) for WhatsApp, Messenger and Instagram.
// Public, verified by Meta's signature over the raw bytes. A delivery is verified, its raw body
// committed to the webhook inbox in one statement, and answered; the worker's router routes it to
// connected accounts, stores its events and their jobs (src/jobs/route-webhook-inbox.ts), and the
// worker processes them (src/jobs/process-webhook-event.ts). Deliveries are served before the app
// (meta-receipt-server.ts); the routes here describe them in /openapi.json and answer requests the
// app is given directly (app.request). Never logs a body, a signature or a token.

export const NAMES = ['whatsapp-webhook', 'meta-webhook'] as const;

/**
 * A delivery's receipt, after the receiver's configuration and limits: the signature over the
 * raw bytes (401), the body a Meta delivery (400), then its raw body committed to the inbox, and
 * this process's router woken. A delivery naming no account at all (no entries) is answered
 * without being kept: there is nothing any account could receive.
 */
export async function receiveMetaDelivery(s: Services, raw: Uint8Array, signature: string | undefined) {
  // One message for every refusal: a forger learns nothing about which part was wrong.
  if (!verifyMetaSignature(raw, signature, s.config.meta.appSecret as string))
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
  if (metaRoutes(d).length === 0) return;
  await receiveMeta(s.db, bodyDigest(raw), text);
  s.webhookInbox.wake();
}

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
      'Signed with X-Hub-Signature-256 (HMAC-SHA256 of the raw body with META_APP_SECRET). Its raw body is committed to the inbox before the 200; the worker routes it to connected accounts and processes it shortly after (its events appear in webhook-events then).',
    responses: {
      200: jsonResponse(z.object({ received: z.literal(true) }), 'Received'),
      ...errorResponses(400, 401, 404, 413, 429),
    },
  });

export function whatsappWebhook(s: Services) {
  const app = newRouter();
  const limit = limitWebhooks(s);
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
      await receiveMetaDelivery(s, raw, c.req.header('x-hub-signature-256'));
      return c.json({ received: true as const }, 200);
    });
  }
  return app;
}

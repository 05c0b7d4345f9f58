import { createRoute, z } from '@hono/zod-openapi';
import { verifiedEvent } from '../channels/stripe-client.ts';
import { storeStripeEvent } from '../domain/billing-events.ts';
import { notFound, unauthorized } from '../platform/errors.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { limitWebhooks, readJson } from './webhook-receiver.ts';

// Stripe's webhook receiver (docs/billing.md "The webhook endpoint"). Stripe-Signature is checked
// on the raw bytes by the official SDK (HMAC-SHA256 of `t.body`, constant-time, the timestamp
// within STRIPE_WEBHOOK_TOLERANCE_SECONDS, so a captured delivery cannot be replayed later); a
// verified event is stored once by its id and answered at once; the worker acts on it. Without
// billing configured the receiver answers 404, as if it did not exist.

const route = createRoute({
  method: 'post',
  path: '/stripe-webhook',
  summary: 'Stripe webhook delivery (checkout, subscription and invoice events)',
  description:
    'Signed with Stripe-Signature (t=…,v1=…: HMAC-SHA256 of `t.body` with the endpoint secret). Deduplicated by event id, stored and answered at once; the worker reads the subscription from Stripe and sets the plan.',
  responses: {
    200: jsonResponse(z.object({ received: z.literal(true) }), 'Received'),
    ...errorResponses(400, 401, 404, 413, 429),
  },
});

export function stripeWebhook(s: Services) {
  const limit = limitWebhooks(s);
  return newRouter().openapi(route, async (c) => {
    const billing = s.config.billing;
    if (!billing) throw notFound('receiver');
    await limit(c);
    const raw = new Uint8Array(await c.req.arrayBuffer());
    const event = await verifiedEvent(billing, raw, c.req.header('stripe-signature'));
    if (!event) throw unauthorized('The request is not signed by Stripe');
    const { text } = readJson(raw);
    const stored = await storeStripeEvent(s.db, s.queue, {
      id: event.id,
      type: event.type,
      created: event.created,
      payload: text,
    });
    c.get('log').info(
      { type: event.type, event: event.id, duplicate: stored.duplicate },
      'stripe event stored',
    );
    return c.json({ received: true as const }, 200);
  });
}

import { createRoute, z } from '@hono/zod-openapi';
import { sameSecret } from '../channels/meta-signature.ts';
import { PROVIDER_OF } from '../domain/conversations.ts';
import { InternalEvent, internalDeliveryId } from '../domain/internal-webhook.ts';
import { storeDelivery } from '../domain/webhook-events.ts';
import { fromZodIssues, notFound, unauthorized, validationError } from '../platform/errors.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { limitWebhooks, readJson } from './webhook-receiver.ts';

// POST /functions/v1/internal-webhook (docs/webhooks.md): trusted systems post
// `{organization_id, type, data, id?}` with `Authorization: Bearer <INTERNAL_WEBHOOK_TOKEN>`.
// The token is checked first (constant time), so a caller without it learns nothing about
// organizations or accounts. Stored through the same inbox as Meta's deliveries and processed
// by the worker. Never logs a body or the token.

const route = createRoute({
  method: 'post',
  path: '/internal-webhook',
  summary: 'Internal event from a trusted system (message.inbound, order.status)',
  description:
    'Authorization: Bearer INTERNAL_WEBHOOK_TOKEN. Body `{organization_id, type, data, id?}`; `message.inbound` ' +
    'data: `{channel, account_id, from, name?, text, provider_message_id?, timestamp?}` (the account must be a ' +
    'live account of that organization for that channel). Deduplicated on `id` (else the SHA-256 of the body), ' +
    'stored and answered at once; processed by the worker. `order.status` data: `{order_id | order_number, status, ' +
    'note?}`: the order moves through its lifecycle; a move it cannot make is recorded as a status event note. ' +
    '404 when INTERNAL_WEBHOOK_TOKEN is unset.',
  responses: {
    200: jsonResponse(z.object({ received: z.literal(true) }), 'Received'),
    ...errorResponses(400, 401, 404, 413, 429),
  },
});

export function internalWebhook(s: Services) {
  const limit = limitWebhooks(s);
  return newRouter().openapi(route, async (c) => {
    const token = s.config.internalWebhookToken;
    if (!token) throw notFound('receiver');
    await limit(c);
    const auth = c.req.header('authorization') ?? '';
    const given = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!sameSecret(given, token)) throw unauthorized('A valid internal webhook token is required');
    const raw = new Uint8Array(await c.req.arrayBuffer());
    const { text, json: parsed } = readJson(raw);
    const event = InternalEvent.safeParse(parsed);
    if (!event.success) throw fromZodIssues(event.error.issues);
    const e = event.data;
    let accountId: string | null = null;
    if (e.type === 'message.inbound') {
      const [account] = await s.db.query<{ id: string }>(
        `select a.id from app.connected_accounts a
          where a.organization_id = $1 and a.id = $2 and a.provider = $3 and a.disconnected_at is null`,
        [e.organization_id, e.data.account_id, PROVIDER_OF[e.data.channel]],
      );
      if (!account)
        throw validationError(
          [{ path: 'data.account_id', message: 'No live account of this organization for this channel' }],
          'Unknown account',
        );
      accountId = account.id;
    } else {
      const [org] = await s.db.query<{ id: string }>(
        'select o.id from public.organizations o where o.id = $1',
        [e.organization_id],
      );
      if (!org)
        throw validationError(
          [{ path: 'organization_id', message: 'No such organization' }],
          'Unknown organization',
        );
    }
    const stored = await storeDelivery(s.db, s.queue, {
      provider: 'internal',
      deliveryId: internalDeliveryId(e, raw),
      topic: e.type,
      payload: text,
      accounts: [{ organization_id: e.organization_id, id: accountId }],
    });
    c.get('log').info(
      { type: e.type, duplicate: stored.duplicate, events: stored.events },
      'internal event stored',
    );
    return c.json({ received: true as const }, 200);
  });
}

import { createRoute, z } from '@hono/zod-openapi';
import { listWebhookEvents, replayWebhookEvent, type WebhookEventSummary } from '../domain/webhook-events.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { listEnvelope, listSchema, PageQuery, pageWindow } from './list-envelope.ts';
import { iso } from './schemas.ts';

// GET/POST /functions/v1/webhook-events: the organization's inbound webhook events (owners and
// admins) and a replay of a failed or rejected one (owners). No answer carries a payload.

const path = '/webhook-events';
const STATUSES = ['pending', 'processed', 'failed', 'rejected', 'ignored'] as const;

const EventSchema = z
  .object({
    id: z.uuid(),
    provider: z.enum(['meta', 'shopify', 'internal']),
    topic: z.string(),
    account_id: z.uuid().nullable(),
    status: z.enum(STATUSES),
    attempts: z.number().int(),
    last_error: z.string().nullable(),
    received_at: z.string(),
    processed_at: z.string().nullable(),
  })
  .openapi('WebhookEvent');

const eventJson = (e: WebhookEventSummary) => ({
  id: e.id,
  provider: e.provider as 'meta' | 'shopify' | 'internal',
  topic: e.topic,
  account_id: e.account_id,
  status: e.status,
  attempts: e.attempts,
  last_error: e.last_error,
  received_at: iso(e.received_at),
  processed_at: e.processed_at && iso(e.processed_at),
});

const list = createRoute({
  method: 'get',
  path,
  summary: 'The organization’s inbound webhook events, newest first (owners and admins)',
  description:
    'Each event: provider, topic, account, status (`pending`, `processed`, `failed`, `rejected`, ' +
    '`ignored`), attempts and the last error. Never the payload. Filter with `status`.',
  request: { query: PageQuery.extend({ status: z.enum(STATUSES).optional() }) },
  responses: { 200: jsonResponse(listSchema(EventSchema), 'Events'), ...errorResponses(400, 401, 403) },
});

const replay = createRoute({
  method: 'post',
  path,
  summary: 'Replay a failed or rejected webhook event (owners)',
  description:
    'Puts the event back to `pending` and processes it again in the worker (e.g. after a plan ' +
    'upgrade for an event rejected at a ceiling). Another status is 409 `not_replayable` with it.',
  request: jsonBody(z.strictObject({ id: z.uuid(), action: z.literal('replay') })),
  responses: { 200: jsonResponse(EventSchema, 'Replayed'), ...errorResponses(400, 401, 403, 404, 409) },
});

export function webhookEvents(s: Services) {
  return newRouter()
    .openapi(list, async (c) => {
      const { status, ...page } = c.req.valid('query');
      const { events, total } = await listWebhookEvents(s, c.get('principal'), { status }, pageWindow(page));
      return c.json(listEnvelope(events.map(eventJson), page, total), 200);
    })
    .openapi(replay, async (c) => {
      const event = await replayWebhookEvent(s, c.get('principal'), c.req.valid('json').id);
      return c.json(eventJson(event), 200);
    });
}

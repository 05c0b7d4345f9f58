import { createRoute, z } from '@hono/zod-openapi';
import { requireScope } from '../domain/agent-keys.ts';
import { CHANNELS, CONVERSATION_STATUSES, pageConversations, pageMessages } from '../domain/conversations.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { listEnvelope, listSchema, PageQuery, pageWindow } from './list-envelope.ts';

// GET /functions/v1/conversations and /conversations/{id}/messages: what a person's inbox reads,
// in the list envelope of spec 4.8. Read-only: conversations are opened by sends and webhooks.

const ConversationSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    account_id: z.uuid(),
    contact_id: z.uuid(),
    channel: z.enum(CHANNELS),
    status: z.enum(CONVERSATION_STATUSES),
    assignee_user_id: z.uuid().nullable(),
    last_message_at: z.string(),
    last_inbound_at: z.string().nullable(),
    unread_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
    contact: z.object({ id: z.uuid(), name: z.string().nullable(), phone: z.string().nullable() }).nullable(),
    last_message: z
      .object({
        id: z.uuid(),
        direction: z.enum(['in', 'out']),
        type: z.string(),
        status: z.string(),
        preview: z.string(),
        created_at: z.string(),
      })
      .nullable(),
  })
  .openapi('Conversation');

export const MessageSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    conversation_id: z.uuid(),
    account_id: z.uuid(),
    direction: z.enum(['in', 'out']),
    type: z.string(),
    body: z.string().nullable(),
    media_url: z.string().nullable(),
    template: z.record(z.string(), z.unknown()).nullable(),
    content: z.unknown().nullable(),
    provider_message_id: z.string().nullable(),
    status: z.enum(['queued', 'sent', 'delivered', 'read', 'failed', 'received']),
    error: z.record(z.string(), z.unknown()).nullable(),
    sent_by_user_id: z.uuid().nullable(),
    sent_by_agent_key_id: z.uuid().nullable(),
    idempotency_key: z.string().nullable(),
    queued_at: z.string().nullable(),
    sent_at: z.string().nullable(),
    delivered_at: z.string().nullable(),
    read_at: z.string().nullable(),
    failed_at: z.string().nullable(),
    received_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Message');

const list = createRoute({
  method: 'get',
  path: '/conversations',
  summary: 'Conversations, newest activity first, with the contact’s name and the last message',
  request: {
    query: PageQuery.extend({
      channel: z.enum(CHANNELS).optional(),
      status: z.enum(CONVERSATION_STATUSES).optional(),
      contact_id: z.uuid().optional(),
      unread_only: z
        .enum(['true', 'false'])
        .optional()
        .transform((v) => v === 'true'),
      updated_since: z
        .string()
        .optional()
        .openapi({ description: 'ISO 8601 instant, e.g. 2026-01-01T00:00:00Z' }),
    }),
  },
  responses: {
    200: jsonResponse(listSchema(ConversationSchema), 'Conversations'),
    ...errorResponses(400, 401, 403),
  },
});

const messages = createRoute({
  method: 'get',
  path: '/conversations/{id}/messages',
  summary: 'A conversation’s messages, newest first',
  request: { params: z.object({ id: z.uuid() }), query: PageQuery },
  responses: {
    200: jsonResponse(listSchema(MessageSchema), 'Messages'),
    ...errorResponses(400, 401, 403, 404),
  },
});

export function conversations(s: Services) {
  return newRouter()
    .openapi(list, async (c) => {
      const principal = c.get('principal');
      await requireScope(s, principal, 'read', 'Listing conversations');
      const { page, per_page, ...filter } = c.req.valid('query');
      const found = await pageConversations(s, principal, filter, pageWindow({ page, per_page }));
      return c.json(listEnvelope(found.conversations, { page, per_page }, found.total), 200);
    })
    .openapi(messages, async (c) => {
      const principal = c.get('principal');
      await requireScope(s, principal, 'read', 'Listing messages');
      const page = c.req.valid('query');
      const found = await pageMessages(s, principal, c.req.valid('param').id, pageWindow(page));
      // biome-ignore lint/suspicious/noExplicitAny: rows are the table's JSON, typed by MessageSchema
      return c.json(listEnvelope(found.messages as any[], page, found.total), 200);
    });
}

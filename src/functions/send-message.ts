import { createRoute, z } from '@hono/zod-openapi';
import type { MessagingChannel } from '../channels/inbound-event.ts';
import { providerError, SendFields, sendMessage } from '../domain/send-message.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { MessageSchema } from './conversations.ts';

// POST /functions/v1/{whatsapp,facebook,instagram}-send-message: one send by a person or a
// `write` agent, in the caller's organization. 201 when Meta took it, 202 when it is queued for
// retries, 502 provider_error when Meta refused it for good. An Idempotency-Key header (or
// idempotency_key in the body) makes a retried call answer the first message, as it stands now.

const NAMES: [path: string, channel: MessagingChannel, label: string][] = [
  ['whatsapp-send-message', 'whatsapp', 'WhatsApp'],
  ['facebook-send-message', 'messenger', 'Messenger (a Facebook Page)'],
  ['instagram-send-message', 'instagram', 'Instagram'],
];

const Answer = z.object({ message: MessageSchema });

const route = (path: string, label: string) =>
  createRoute({
    method: 'post',
    path: `/${path}`,
    summary: `Send a ${label} message to a contact, a conversation or an address`,
    description:
      'Give one of contact_id, conversation_id or to, and one of text, template (WhatsApp) or media_url. Outside the 24-hour window WhatsApp takes only templates (409 outside_messaging_window says when it closed). 201: sent; 202: queued for retries; 502 provider_error: refused by Meta (details carry its code).',
    request: {
      headers: z.object({ 'idempotency-key': z.string().min(1).max(255).optional() }),
      ...jsonBody(SendFields),
    },
    responses: {
      201: jsonResponse(Answer, 'Sent'),
      202: jsonResponse(Answer, 'Queued: the worker retries it'),
      ...errorResponses(400, 401, 403, 404, 409, 502),
    },
  });

export function sendMessageFunctions(s: Services) {
  const app = newRouter();
  for (const [path, channel, label] of NAMES) {
    app.openapi(route(path, label), async (c) => {
      const principal = c.get('principal');
      const body = c.req.valid('json');
      const key = c.req.valid('header')['idempotency-key'] ?? body.idempotency_key;
      const sent = await sendMessage(s, principal, { ...body, channel, idempotency_key: key });
      if (sent.replayed) c.header('Idempotent-Replayed', 'true');
      if (sent.state === 'failed') throw providerError(sent);
      // biome-ignore lint/suspicious/noExplicitAny: the row is the table's JSON, typed by MessageSchema
      const message = sent.message as any;
      return sent.state === 'sent' ? c.json({ message }, 201) : c.json({ message }, 202);
    });
  }
  return app;
}

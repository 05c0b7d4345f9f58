import { z } from 'zod';
import { CHANNELS, CONVERSATION_STATUSES, listConversations } from '../../domain/conversations.ts';
import { providerError, requireMessagingPlan, SendFields, sendMessage } from '../../domain/send-message.ts';
import { defineTool } from '../tool.ts';
import { CREATE, cursor, limit, nextCursor, READ } from './common.ts';

export const listConversationsTool = defineTool({
  name: 'svc_list_conversations',
  title: 'List conversations',
  description:
    'WhatsApp, Messenger and Instagram conversations, latest activity first, each with the contact’s name and the last message. Returns {conversations, next_cursor}.',
  scope: 'read',
  input: z.strictObject({
    channel: z.enum(CHANNELS).optional(),
    status: z.enum(CONVERSATION_STATUSES).optional(),
    contact_id: z.guid().optional(),
    unread_only: z.boolean().optional(),
    updated_since: z.iso.datetime({ offset: true }).optional(),
    limit: limit(),
    cursor: cursor(),
  }),
  output: z.object({ conversations: z.array(z.record(z.string(), z.unknown())), next_cursor: nextCursor() }),
  annotations: READ,
  run: ({ s, principal }, args) => listConversations(s, principal, args),
});

const {
  contact_id,
  conversation_id,
  to,
  account_id,
  text,
  template,
  media_url,
  media_type,
  caption,
  idempotency_key,
} = SendFields.shape;

export const sendMessageTool = defineTool({
  name: 'svc_send_message',
  title: 'Send a message',
  description:
    'Message a contact on WhatsApp, Messenger or Instagram: one of contact_id, conversation_id, to, and one of text, template (WhatsApp), media_url. WhatsApp text needs a customer message in the last 24 h, else send a template. Returns {message} (sent, or queued for retry).',
  scope: 'write',
  input: z.strictObject({
    channel: z.enum(CHANNELS),
    contact_id,
    conversation_id,
    to: to.describe('phone number (WhatsApp) or platform user id'),
    account_id: account_id.describe('if several are connected'),
    text,
    template,
    media_url,
    media_type,
    caption,
    idempotency_key: idempotency_key.describe('a retry with the same key never sends twice'),
  }),
  output: z.object({ message: z.record(z.string(), z.unknown()) }),
  annotations: CREATE,
  precheck: ({ s, principal }) => requireMessagingPlan(s, principal),
  run: async ({ s, principal }, args) => {
    const sent = await sendMessage(s, principal, args);
    if (sent.state === 'failed') throw providerError(sent);
    return { message: sent.message };
  },
});

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CHANNELS } from '../domain/conversations.ts';
import type { InboundEvent } from '../domain/inbound-messages.ts';

// Internal events posted by trusted systems to internal-webhook (docs/webhooks.md): the body's
// shape, checked at receipt, and what the worker makes of a stored one.

const MessageInbound = z.object({
  channel: z.enum(CHANNELS),
  account_id: z.uuid(),
  from: z.string().trim().min(1).max(255),
  name: z.string().trim().min(1).max(200).optional(),
  text: z.string().min(1).max(4096),
  provider_message_id: z.string().trim().min(1).max(255).optional(),
  /** Seconds since the epoch, or an ISO 8601 date-time. */
  timestamp: z.union([z.number().int().positive(), z.iso.datetime({ offset: true })]).optional(),
});

export const InternalEvent = z.object({
  organization_id: z.uuid(),
  id: z.string().trim().min(1).max(200).optional(),
  type: z.literal('message.inbound'),
  data: MessageInbound,
});
export type InternalEvent = z.infer<typeof InternalEvent>;

/** The delivery key: the body's own id (per organization), else the SHA-256 of the raw body. */
export const internalDeliveryId = (e: InternalEvent, raw: Uint8Array) =>
  e.id !== undefined ? `${e.organization_id}:${e.id}` : createHash('sha256').update(raw).digest('hex');

/** What a stored internal event becomes; null: not an internal event this service handles. */
export function internalEvents(payload: string): InboundEvent[] | null {
  const parsed = InternalEvent.safeParse(JSON.parse(payload));
  if (!parsed.success) return null;
  const e = parsed.data;
  const d = e.data;
  const receivedAt =
    d.timestamp === undefined
      ? null
      : typeof d.timestamp === 'number'
        ? new Date(d.timestamp * 1000)
        : new Date(d.timestamp);
  return [
    {
      kind: 'message',
      channel: d.channel,
      from: { id: d.from, name: d.name },
      providerMessageId:
        d.provider_message_id ?? `internal:${e.id ?? createHash('sha256').update(payload).digest('hex')}`,
      type: 'text',
      body: d.text,
      content: null,
      receivedAt,
    },
  ];
}

import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { InboundEvent } from '../channels/inbound-event.ts';
import { CHANNELS } from './conversations.ts';
import { ORDER_STATUSES } from './order-lifecycle.ts';

// Internal events posted by trusted systems to internal-webhook (docs/webhooks.md): the body's
// shape, checked at receipt, and what the worker makes of a stored one. Our own format, in our
// own words (order statuses, channels): a domain input, not an outside party's payload.

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

const OrderStatusData = z
  .object({
    order_id: z.uuid().optional(),
    order_number: z.string().trim().min(1).max(100).optional(),
    status: z.enum(ORDER_STATUSES),
    note: z.string().trim().min(1).max(1000).optional(),
  })
  .refine((d) => (d.order_id === undefined) !== (d.order_number === undefined), {
    message: 'Give order_id or order_number (one of them)',
  });

const Common = {
  organization_id: z.uuid(),
  id: z.string().trim().min(1).max(200).optional(),
};

export const InternalEvent = z.discriminatedUnion('type', [
  z.object({ ...Common, type: z.literal('message.inbound'), data: MessageInbound }),
  z.object({ ...Common, type: z.literal('order.status'), data: OrderStatusData }),
]);
export type InternalEvent = z.infer<typeof InternalEvent>;

/** The delivery key: the body's own id (per organization), else the SHA-256 of the raw body. */
export const internalDeliveryId = (e: InternalEvent, raw: Uint8Array) =>
  e.id !== undefined ? `${e.organization_id}:${e.id}` : createHash('sha256').update(raw).digest('hex');

/** A stored internal event, or null when it is none this service handles. */
export function parseInternal(payload: string): InternalEvent | null {
  const parsed = InternalEvent.safeParse(JSON.parse(payload));
  return parsed.success ? parsed.data : null;
}

/** What a stored message.inbound event becomes. */
export function internalEvents(payload: string): InboundEvent[] | null {
  const e = parseInternal(payload);
  if (e?.type !== 'message.inbound') return null;
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

import type { Queryable } from '../platform/db/database.ts';
import { conversationFor } from './conversations.ts';
import type { MessagingChannel } from './deps.ts';

// What a customer's platform tells us, whatever the provider (src/channels/meta-webhook.ts maps
// Meta's payloads to these): a message they sent, a status of one we sent, or a watermark (every
// message we sent before it was delivered or read). Applied in the caller's transaction on the
// service path, for one organization and connected account. Idempotent: a message is stored once
// per provider id (the unique index of migrations/0016), and statuses only move forward, so
// applying the same events twice changes nothing.

export type InboundMessageType =
  | 'text'
  | 'image'
  | 'video'
  | 'audio'
  | 'document'
  | 'sticker'
  | 'location'
  | 'contacts'
  | 'interactive'
  | 'reaction'
  | 'unsupported';

export type DeliveryStatus = 'sent' | 'delivered' | 'read' | 'failed';

export type InboundEvent =
  | {
      kind: 'message';
      channel: MessagingChannel;
      from: { id: string; name?: string | undefined };
      providerMessageId: string;
      type: InboundMessageType;
      body: string | null;
      content: Record<string, unknown> | null;
      /** The provider's timestamp; null: now. */
      receivedAt: Date | null;
    }
  | {
      kind: 'status';
      providerMessageId: string;
      status: DeliveryStatus;
      at: Date | null;
      error?: Record<string, unknown>;
      /** True: an id not known yet may be the send's answer still on its way (wait and retry). */
      awaitUnknown: boolean;
    }
  | {
      kind: 'watermark';
      channel: MessagingChannel;
      /** The customer's platform id (PSID, Instagram-scoped id). */
      contact: string;
      status: 'delivered' | 'read';
      watermark: Date;
    };

export type Applied = {
  messages: number;
  statuses: number;
  /** Provider ids of statuses that found no message yet and should be tried again later. */
  unmatched: string[];
};

/**
 * Statuses move forward only: queued < sent < delivered < read. `failed` settles a message not
 * yet delivered; nothing moves a failed one. The SQL below is the one place this is decided.
 */
const FORWARD = `case m.status when 'queued' then 0 when 'sent' then 1 when 'delivered' then 2
                               when 'read' then 3 else 4 end`;
const RANK: Record<DeliveryStatus, number> = { sent: 1, delivered: 2, read: 3, failed: 2 };

/** Applies `events` for `accountId` of `organizationId`. */
export async function applyInbound(
  tx: Queryable,
  organizationId: string,
  accountId: string,
  events: InboundEvent[],
): Promise<Applied> {
  const applied: Applied = { messages: 0, statuses: 0, unmatched: [] };
  for (const e of events) {
    if (e.kind === 'message') {
      if (await insertInbound(tx, organizationId, accountId, e)) applied.messages++;
    } else if (e.kind === 'status') {
      const r = await applyStatus(tx, organizationId, accountId, e);
      if (r === 'missing' && e.awaitUnknown) applied.unmatched.push(e.providerMessageId);
      if (r === 'moved') applied.statuses++;
    } else {
      applied.statuses += await applyWatermark(tx, organizationId, accountId, e);
    }
  }
  return applied;
}

// PostgreSQL's text and jsonb cannot hold U+0000, which JSON may escape (\u0000): dropped, so one
// such character never keeps a customer's message out.
const noNul = (v: string) => v.replaceAll('\u0000', '');
const jsonText = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'string' ? noNul(x) : x));

async function insertInbound(
  tx: Queryable,
  org: string,
  accountId: string,
  e: Extract<InboundEvent, { kind: 'message' }>,
): Promise<boolean> {
  const { conversation } = await conversationFor(tx, org, accountId, {
    channel: e.channel,
    id: e.from.id,
    name: e.from.name === undefined ? undefined : noNul(e.from.name),
  });
  const rows = await tx.query(
    `insert into public.messages (organization_id, conversation_id, account_id, direction, type, body, content,
                                  provider_message_id, status, received_at)
     values ($1, $2, $3, 'in', $4, $5, $6::jsonb, $7, 'received', coalesce($8::timestamptz, now()))
     on conflict (organization_id, account_id, provider_message_id) do nothing returning id`,
    [
      org,
      conversation.id,
      accountId,
      e.type,
      e.body === null ? null : noNul(e.body).slice(0, 10_000),
      e.content ? jsonText(e.content) : null,
      e.providerMessageId.slice(0, 255),
      e.receivedAt?.toISOString() ?? null,
    ],
  );
  return rows.length > 0;
}

async function applyStatus(
  tx: Queryable,
  org: string,
  accountId: string,
  e: Extract<InboundEvent, { kind: 'status' }>,
): Promise<'missing' | 'moved' | 'stale'> {
  const [found] = await tx.query<{ id: string }>(
    `select m.id from public.messages m
      where m.organization_id = $1 and m.account_id = $2 and m.provider_message_id = $3 and m.direction = 'out'`,
    [org, accountId, e.providerMessageId],
  );
  if (!found) return 'missing';
  const at = e.at?.toISOString() ?? null;
  const failed = e.status === 'failed';
  const rows = await tx.query(
    `update public.messages m
        set status = $3,
            sent_at = coalesce(m.sent_at, $4::timestamptz, now()),
            delivered_at = case when $3 in ('delivered', 'read') then coalesce(m.delivered_at, $4::timestamptz, now())
                                else m.delivered_at end,
            read_at = case when $3 = 'read' then coalesce(m.read_at, $4::timestamptz, now()) else m.read_at end,
            failed_at = case when $5 then coalesce($4::timestamptz, now()) else m.failed_at end,
            error = case when $5 then $6::jsonb else m.error end
      where m.organization_id = $1 and m.id = $2
        and ${FORWARD} < $7 and ($5 is false or m.status in ('queued', 'sent'))
      returning m.id`,
    [org, found.id, e.status, at, failed, failed ? JSON.stringify(e.error ?? {}) : null, RANK[e.status]],
  );
  return rows.length ? 'moved' : 'stale';
}

async function applyWatermark(
  tx: Queryable,
  org: string,
  accountId: string,
  e: Extract<InboundEvent, { kind: 'watermark' }>,
): Promise<number> {
  const column = e.channel === 'instagram' ? 'instagram_id' : 'facebook_psid';
  const rows = await tx.query(
    `update public.messages m
        set status = $4,
            delivered_at = coalesce(m.delivered_at, $5::timestamptz),
            read_at = case when $4 = 'read' then coalesce(m.read_at, $5::timestamptz) else m.read_at end
       from public.conversations v
       join public.contacts c on c.organization_id = v.organization_id and c.id = v.contact_id
      where v.organization_id = $1 and v.account_id = $2 and c.${column} = $3
        and m.organization_id = v.organization_id and m.conversation_id = v.id
        and m.direction = 'out' and m.sent_at <= $5::timestamptz
        and ${FORWARD} < $6
      returning m.id`,
    [org, accountId, e.contact, e.status, e.watermark.toISOString(), RANK[e.status]],
  );
  return rows.length;
}

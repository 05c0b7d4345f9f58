import type { DeliveryStatus, InboundEvent } from '../channels/inbound-event.ts';
import type { Queryable } from '../platform/db/database.ts';
import { storedIdentity } from './conversations.ts';

// What a customer's platform tells us (InboundEvent, src/channels/inbound-event.ts), applied in
// the caller's transaction on the service path, for one organization and connected account. Idempotent: a message is stored once
// per provider id (the unique index of migrations/0016), and statuses only move forward, so
// applying the same events twice changes nothing.

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

/**
 * Applies `events` for `accountId` of `organizationId`: one statement each, all issued before any
 * answer is awaited, so on a pipelining connection they leave together and cost one round trip
 * (they still run in order, in the caller's transaction; the first failure fails the whole).
 */
export async function applyInbound(
  tx: Queryable,
  organizationId: string,
  accountId: string,
  events: InboundEvent[],
): Promise<Applied> {
  const runs = events.map(async (e): Promise<Applied> => {
    if (e.kind === 'message') {
      const stored = await receiveMessage(tx, organizationId, accountId, e);
      return { messages: stored ? 1 : 0, statuses: 0, unmatched: [] };
    }
    if (e.kind === 'status') {
      const r = await applyStatus(tx, organizationId, accountId, e);
      return {
        messages: 0,
        statuses: r === 'moved' ? 1 : 0,
        unmatched: r === 'missing' && e.awaitUnknown ? [e.providerMessageId] : [],
      };
    }
    return { messages: 0, statuses: await applyWatermark(tx, organizationId, accountId, e), unmatched: [] };
  });
  const applied: Applied = { messages: 0, statuses: 0, unmatched: [] };
  for (const r of await Promise.all(runs)) {
    applied.messages += r.messages;
    applied.statuses += r.statuses;
    applied.unmatched.push(...r.unmatched);
  }
  return applied;
}

/**
 * Whether applying `events` ends the same whatever the database holds: true unless a status may
 * name a send whose answer is still on its way (then the event waits and is tried again). The
 * worker records such an event's ending beside its statements instead of after them.
 */
export const settlesAtOnce = (events: InboundEvent[]) =>
  events.every((e) => e.kind !== 'status' || !e.awaitUnknown);

// PostgreSQL's text and jsonb cannot hold U+0000, which JSON may escape (\u0000): dropped, so one
// such character never keeps a customer's message out.
const noNul = (v: string) => v.replaceAll('\u0000', '');
const jsonText = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'string' ? noNul(x) : x));

/** The contact, the conversation and the message in one statement (migrations/0041). */
async function receiveMessage(
  tx: Queryable,
  org: string,
  accountId: string,
  e: Extract<InboundEvent, { kind: 'message' }>,
): Promise<boolean> {
  const who = storedIdentity({
    channel: e.channel,
    id: e.from.id,
    name: e.from.name === undefined ? undefined : noNul(e.from.name),
  });
  const [row] = await tx.query<{ stored: boolean }>(
    `select app.receive_message($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11::timestamptz) as stored`,
    [
      org,
      accountId,
      who.channel,
      who.value,
      who.phone,
      who.name,
      e.type,
      e.body === null ? null : noNul(e.body).slice(0, 10_000),
      e.content ? jsonText(e.content) : null,
      e.providerMessageId.slice(0, 255),
      e.receivedAt?.toISOString() ?? null,
    ],
  );
  return row?.stored === true;
}

/** The send's status moved forward, if it may: one statement that also says whether it exists. */
async function applyStatus(
  tx: Queryable,
  org: string,
  accountId: string,
  e: Extract<InboundEvent, { kind: 'status' }>,
): Promise<'missing' | 'moved' | 'stale'> {
  const at = e.at?.toISOString() ?? null;
  const failed = e.status === 'failed';
  const [row] = await tx.query<{ found: boolean; moved: boolean }>(
    `with found as (
       select m.id from public.messages m
        where m.organization_id = $1 and m.account_id = $2 and m.provider_message_id = $3 and m.direction = 'out'),
     moved as (
       update public.messages m
          set status = $4,
              sent_at = coalesce(m.sent_at, $5::timestamptz, now()),
              delivered_at = case when $4 in ('delivered', 'read') then coalesce(m.delivered_at, $5::timestamptz, now())
                                  else m.delivered_at end,
              read_at = case when $4 = 'read' then coalesce(m.read_at, $5::timestamptz, now()) else m.read_at end,
              failed_at = case when $6 then coalesce($5::timestamptz, now()) else m.failed_at end,
              error = case when $6 then $7::jsonb else m.error end
         from found f
        where m.organization_id = $1 and m.id = f.id
          and ${FORWARD} < $8 and ($6 is false or m.status in ('queued', 'sent'))
        returning m.id)
     select exists (select 1 from found) as found, exists (select 1 from moved) as moved`,
    [
      org,
      accountId,
      e.providerMessageId,
      e.status,
      at,
      failed,
      failed ? JSON.stringify(e.error ?? {}) : null,
      RANK[e.status],
    ],
  );
  if (!row?.found) return 'missing';
  return row.moved ? 'moved' : 'stale';
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

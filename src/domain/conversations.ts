import { z } from 'zod';
import type { MessagingChannel } from '../channels/inbound-event.ts';
import type { Principal, Queryable } from '../platform/db/database.ts';
import { Params } from '../platform/db/params.ts';
import { invalidField, notFound } from '../platform/errors.ts';
import type { Deps } from './deps.ts';
import { parseInput } from './inputs.ts';
import { requireCurrentOrg } from './organizations.ts';
import { listPage } from './pagination.ts';
import { providerPhone } from './phone.ts';

// Conversations: one per organization × connected account × contact (migrations/0016). Takes a
// channel identity (who wrote or is written to) and gives out the contact and conversation for
// it, created when missing and the same row for concurrent callers; and the lists people and
// agents read. Writing messages is the sender's and the webhook receiver's business.

export const CHANNELS = ['whatsapp', 'messenger', 'instagram'] as const;
export const CONVERSATION_STATUSES = ['open', 'pending', 'resolved', 'snoozed'] as const;

/** Which contacts column holds a channel's identity (unique per organization, 0005). */
export const IDENTITY_COLUMN: Record<MessagingChannel, 'whatsapp_id' | 'facebook_psid' | 'instagram_id'> = {
  whatsapp: 'whatsapp_id',
  messenger: 'facebook_psid',
  instagram: 'instagram_id',
};

/** The provider whose connected account sends on a channel (Messenger through a Facebook Page). */
export const PROVIDER_OF: Record<MessagingChannel, 'whatsapp' | 'facebook' | 'instagram'> = {
  whatsapp: 'whatsapp',
  messenger: 'facebook',
  instagram: 'instagram',
};

/** The channel an account's provider talks over (a Facebook Page over Messenger). */
const CHANNEL_OF: Record<string, MessagingChannel | undefined> = Object.fromEntries(
  (Object.entries(PROVIDER_OF) as [MessagingChannel, string][]).map(([channel, provider]) => [
    provider,
    channel,
  ]),
);

/**
 * Who is on the other end: WhatsApp's `wa_id` or a phone number in any common form (stored as
 * E.164 in `phone`, digits only in `whatsapp_id`, as WhatsApp writes wa_id); a Page-scoped ID
 * (PSID) for Messenger; an Instagram-scoped ID for Instagram. `name` (a profile name) names a
 * contact created here; an existing contact keeps its name.
 */
export const ChannelIdentity = z.object({
  channel: z.enum(CHANNELS),
  id: z.string().trim().min(1).max(64),
  // A profile name comes from the platform: cut to the contacts column's 200, never refused.
  name: z
    .string()
    .trim()
    .transform((n) => n.slice(0, 200))
    .optional(),
});
export type ChannelIdentity = z.input<typeof ChannelIdentity>;

export type Conversation = {
  organization_id: string;
  id: string;
  account_id: string;
  contact_id: string;
  channel: MessagingChannel;
  status: (typeof CONVERSATION_STATUSES)[number];
  assignee_user_id: string | null;
  last_message_at: string;
  last_inbound_at: string | null;
  unread_count: number;
  created_at: string;
  updated_at: string;
};

/** The identity as stored: the column, its value and (WhatsApp) the E.164 phone. */
function identityKey(who: z.output<typeof ChannelIdentity>) {
  if (who.channel !== 'whatsapp') {
    if (!/^[0-9A-Za-z_-]+$/.test(who.id))
      throw invalidField('id', 'Send the platform’s user id as it gave it');
    return { column: IDENTITY_COLUMN[who.channel], value: who.id, phone: null };
  }
  const phone = providerPhone(who.id, 'id');
  return { column: IDENTITY_COLUMN.whatsapp, value: phone.slice(1), phone };
}

/**
 * A channel identity as the contacts table stores it (the value of the channel's column, the E.164
 * phone for WhatsApp, the profile name), or the 400 a bad one earns: what app.receive_message
 * (migrations/0041) takes.
 */
export function storedIdentity(identity: ChannelIdentity) {
  const who = parseInput(ChannelIdentity, identity);
  const { value, phone } = identityKey(who);
  return { channel: who.channel, value, phone, name: who.name || null };
}

/**
 * The contact `who` is in organization `organizationId`, created when there is none (a new
 * contact counts against the plan's contacts ceiling, enforced by the insert's trigger). Runs in
 * the caller's transaction: as a person or agent (row-level security decides, and reading alone
 * is not enough) or on the service path (webhooks). A WhatsApp identity first claims an existing
 * contact with that phone number and no WhatsApp id yet, the oldest one.
 */
export async function findOrCreateContact(
  tx: Queryable,
  organizationId: string,
  identity: ChannelIdentity,
): Promise<{ contact_id: string; created: boolean }> {
  const who = parseInput(ChannelIdentity, identity);
  const { column, value, phone } = identityKey(who);
  const find = async () =>
    (
      await tx.query<{ id: string }>(
        `select c.id from public.contacts c where c.organization_id = $1 and c.${column} = $2`,
        [organizationId, value],
      )
    )[0]?.id;
  const found = await find();
  if (found) return { contact_id: found, created: false };
  if (phone) {
    const [claimed] = await tx.query<{ id: string }>(
      `update public.contacts c set whatsapp_id = $2
        where (c.organization_id, c.id) = (select o.organization_id, o.id from public.contacts o
                 where o.organization_id = $1 and o.phone = $3 and o.whatsapp_id is null
                 order by o.created_at, o.id limit 1)
          and c.whatsapp_id is null
        returning c.id`,
      [organizationId, value, phone],
    );
    if (claimed) return { contact_id: claimed.id, created: false };
  }
  // Concurrent callers with the same identity: one inserts, the others wait for it and insert
  // nothing; the next statement (a new snapshot) finds the winner's row.
  const [inserted] = await tx.query<{ id: string }>(
    `insert into public.contacts (organization_id, ${column}, phone, first_name, source)
     values ($1, $2, $3, $4, $5)
     on conflict (organization_id, ${column}) do nothing returning id`,
    [organizationId, value, phone, who.name || null, who.channel],
  );
  if (inserted) return { contact_id: inserted.id, created: true };
  const winner = await find();
  if (!winner) throw new Error('contact vanished between insert and select');
  return { contact_id: winner, created: false };
}

/** The conversation of (account, contact), created when missing (app.open_conversation). */
export async function openConversation(
  tx: Queryable,
  organizationId: string,
  accountId: string,
  contactId: string,
): Promise<Conversation> {
  const [row] = await tx.query<{ r: Conversation }>(
    'select to_jsonb(v) as r from app.open_conversation($1, $2, $3) v',
    [organizationId, accountId, contactId],
  );
  if (!row) throw notFound('conversation');
  return row.r;
}

/**
 * The contact and conversation for a channel identity on one connected account, each created when
 * missing: the sender resolves `to` with it, the webhook receiver every inbound message. Runs in
 * the caller's transaction (see findOrCreateContact for who may). `knownChannel`: the caller read
 * the account as live on that channel in this transaction, so it is not looked up again
 * (app.open_conversation checks it all the same).
 */
export async function conversationFor(
  tx: Queryable,
  organizationId: string,
  accountId: string,
  identity: ChannelIdentity,
  knownChannel?: MessagingChannel,
) {
  const channel = knownChannel ?? (await accountChannel(tx, organizationId, accountId));
  if (!channel) throw notFound('connected messaging account');
  if (identity.channel !== channel)
    throw invalidField('channel', `This account talks over ${channel}, not ${identity.channel}`);
  const contact = await findOrCreateContact(tx, organizationId, identity);
  const conversation = await openConversation(tx, organizationId, accountId, contact.contact_id);
  return { contact_id: contact.contact_id, contact_created: contact.created, conversation };
}

/** The channel a live messaging account talks over; undefined for none. */
async function accountChannel(tx: Queryable, organizationId: string, accountId: string) {
  const [account] = await tx.query<{ provider: string }>(
    `select a.provider from app.connected_accounts a
      where a.organization_id = $1 and a.id = $2 and a.disconnected_at is null`,
    [organizationId, accountId],
  );
  return account && CHANNEL_OF[account.provider];
}

/** conversationFor as the caller, in the caller's current organization. */
export async function openConversationFor(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  input: { account_id: string; identity: ChannelIdentity },
) {
  return deps.db.asPrincipal(principal, async (tx) => {
    const org = await requireCurrentOrg(tx);
    return conversationFor(tx, org, input.account_id, input.identity);
  });
}

export const ConversationFilter = z.object({
  channel: z.enum(CHANNELS).optional(),
  status: z.enum(CONVERSATION_STATUSES).optional(),
  contact_id: z.uuid().optional(),
  unread_only: z.boolean().optional(),
  /** Conversations changed at or after this instant (a new message changes its conversation). */
  updated_since: z.iso.datetime({ offset: true }).optional(),
});
export type ConversationFilter = z.input<typeof ConversationFilter>;

function filterWhere(input: ConversationFilter, p: Params): string[] {
  const f = parseInput(ConversationFilter, input);
  const where: string[] = [];
  if (f.channel) where.push(`v.channel = ${p.add(f.channel)}`);
  if (f.status) where.push(`v.status = ${p.add(f.status)}`);
  if (f.contact_id) where.push(`v.contact_id = ${p.add(f.contact_id)}::uuid`);
  if (f.unread_only) where.push('v.unread_count > 0');
  if (f.updated_since) where.push(`v.updated_at >= ${p.add(f.updated_since)}::timestamptz`);
  return where;
}

// A list item: the conversation, its contact's name and its newest message in brief.
const ITEM = `to_jsonb(v) || jsonb_build_object(
  'contact', (select jsonb_build_object('id', c.id,
                'name', coalesce(nullif(concat_ws(' ', c.first_name, c.last_name), ''), c.company, c.phone, c.email),
                'phone', c.phone)
                from public.contacts c where c.organization_id = v.organization_id and c.id = v.contact_id),
  'last_message', (select jsonb_build_object('id', m.id, 'direction', m.direction, 'type', m.type,
                'status', m.status, 'preview', coalesce(left(m.body, 160), '[' || m.type || ']'),
                'created_at', m.created_at)
                from public.messages m where m.organization_id = v.organization_id and m.conversation_id = v.id
               order by m.created_at desc, m.id desc limit 1))`;

export type ConversationItem = Conversation & {
  contact: { id: string; name: string | null; phone: string | null } | null;
  last_message: {
    id: string;
    direction: 'in' | 'out';
    type: string;
    status: string;
    preview: string;
    created_at: string;
  } | null;
};

/** Conversations, newest activity first, by cursor (what MCP lists use). */
export async function listConversations(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  f: ConversationFilter & { cursor?: string; limit: number },
) {
  const p = new Params();
  const { items, next_cursor } = await listPage<ConversationItem>(deps, principal, {
    from: 'public.conversations v',
    alias: 'v',
    row: ITEM,
    where: filterWhere(f, p),
    p,
    cursor: f.cursor,
    limit: f.limit,
    by: 'last_message_at',
  });
  return { conversations: items, next_cursor };
}

/** Conversations, newest activity first, by page, with the total (the functions' list envelope). */
export async function pageConversations(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  f: ConversationFilter,
  page: { limit: number; offset: number },
) {
  const p = new Params();
  const where = filterWhere(f, p);
  const cond = where.length ? `where ${where.join(' and ')}` : '';
  return deps.db.asPrincipal(
    principal,
    async (tx) => {
      await requireCurrentOrg(tx);
      const [count] = await tx.query<{ n: number }>(
        `select count(*)::int as n from public.conversations v ${cond}`,
        p.values,
      );
      const rows = await tx.query<{ r: ConversationItem }>(
        `select ${ITEM} as r from (select v.* from public.conversations v ${cond}
           order by v.last_message_at desc, v.id desc
           limit ${p.add(page.limit)} offset ${p.add(page.offset)}) v
         order by v.last_message_at desc, v.id desc`,
        p.values,
      );
      return { conversations: rows.map((x) => x.r), total: count?.n ?? 0 };
    },
    { readOnly: true },
  );
}

export type Message = Record<string, unknown> & { id: string; conversation_id: string; created_at: string };

/** A conversation's messages, newest first, by page, with the total; 404 for one not visible. */
export async function pageMessages(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  conversationId: string,
  page: { limit: number; offset: number },
) {
  return deps.db.asPrincipal(
    principal,
    async (tx) => {
      await requireCurrentOrg(tx);
      const [conversation] = await tx.query<{ organization_id: string }>(
        'select v.organization_id from public.conversations v where v.id = $1',
        [conversationId],
      );
      if (!conversation) throw notFound('conversation');
      const key = [conversation.organization_id, conversationId];
      const [count] = await tx.query<{ n: number }>(
        'select count(*)::int as n from public.messages m where m.organization_id = $1 and m.conversation_id = $2',
        key,
      );
      const rows = await tx.query<{ r: Message }>(
        `select to_jsonb(m) as r from public.messages m where m.organization_id = $1 and m.conversation_id = $2
          order by m.created_at desc, m.id desc limit $3 offset $4`,
        [...key, page.limit, page.offset],
      );
      return { messages: rows.map((x) => x.r), total: count?.n ?? 0 };
    },
    { readOnly: true },
  );
}

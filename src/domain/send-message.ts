import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { MessagingChannel } from '../channels/inbound-event.ts';
import type { Config } from '../config.ts';
import { claimedOrganization, type Principal, type Queryable } from '../platform/db/database.ts';
import { AppError, invalidField, notFound } from '../platform/errors.ts';
import { type Logger, logFailure } from '../platform/log.ts';
import type { Metrics } from '../platform/metrics/metrics.ts';
import type { Queue } from '../platform/queue/queue.ts';
import { requireScope } from './agent-keys.ts';
import { accountNeedsReconnect } from './connection-health.ts';
import {
  CHANNELS,
  type Conversation,
  conversationFor,
  IDENTITY_COLUMN,
  openConversation,
  PROVIDER_OF,
} from './conversations.ts';
import { type Delivery, deliver, deliverDeps, type MessageRow, sendKey } from './deliver-message.ts';
import type { Deps } from './deps.ts';
import { parseInput } from './inputs.ts';
import { type ContentKind, deliveryFor } from './messaging-window.ts';
import { requireCurrentOrg } from './organizations.ts';

// One send, whichever entry point asked (the three *-send-message functions, svc_send_message):
// checked, then queued in the caller's transaction with its job (so a crash after the commit
// still sends it, once), then delivered at once by src/domain/deliver-message.ts's `deliver`.

const MEDIA_TYPES = ['image', 'video', 'audio', 'document'] as const;

/** What a send takes besides its channel (the functions' body; the channel is their name). */
export const SendFields = z.object({
  contact_id: z.uuid().optional(),
  conversation_id: z.uuid().optional(),
  /** WhatsApp: a phone number or wa_id; Messenger: a PSID; Instagram: an Instagram-scoped id. */
  to: z.string().trim().min(1).max(64).optional(),
  /** Which connected account sends; needed only when several of the channel's are connected. */
  account_id: z.uuid().optional(),
  text: z.string().trim().min(1).max(4096).optional(),
  template: z
    .object({
      name: z.string().trim().min(1).max(512),
      language: z.string().trim().min(2).max(15),
      components: z.array(z.record(z.string(), z.unknown())).max(20).optional(),
    })
    .optional(),
  media_url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
  media_type: z.enum(MEDIA_TYPES).optional(),
  caption: z.string().trim().min(1).max(1024).optional(),
  idempotency_key: z.string().min(1).max(255).optional(),
});

export const SendMessageInput = SendFields.extend({ channel: z.enum(CHANNELS) }).superRefine((v, ctx) => {
  const one = (keys: (keyof typeof v)[], what: string) => {
    if (keys.filter((k) => v[k] !== undefined).length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: [keys[0] as string],
        message: `Send exactly one of ${keys.join(', ')} (${what})`,
      });
  };
  one(['contact_id', 'conversation_id', 'to'], 'who receives it');
  one(['text', 'template', 'media_url'], 'what is sent');
  if (v.template && v.channel !== 'whatsapp')
    ctx.addIssue({
      code: 'custom',
      path: ['template'],
      message: 'Templates are a WhatsApp feature; send text or media_url',
    });
  // What each platform carries (the fake Graph API checks the same): a caption only on WhatsApp
  // images, videos and documents; text up to 4,096 characters on WhatsApp, 2,000 on Messenger and
  // 1,000 bytes on Instagram.
  if (v.caption !== undefined && (v.channel !== 'whatsapp' || !v.media_url || v.media_type === 'audio'))
    ctx.addIssue({
      code: 'custom',
      path: ['caption'],
      message: 'A caption goes only with a WhatsApp image, video or document (media_url)',
    });
  const tooLong =
    v.text === undefined
      ? null
      : v.channel === 'messenger' && v.text.length > 2000
        ? '2,000 characters on Messenger'
        : v.channel === 'instagram' && Buffer.byteLength(v.text) > 1000
          ? '1,000 bytes on Instagram'
          : null;
  if (tooLong) ctx.addIssue({ code: 'custom', path: ['text'], message: `Text is limited to ${tooLong}` });
  if (v.channel === 'instagram' && v.media_type === 'document')
    ctx.addIssue({
      code: 'custom',
      path: ['media_type'],
      message: 'Instagram carries image, video and audio, not documents',
    });
});
export type SendMessageInput = z.input<typeof SendMessageInput>;

/** What a send did: queued now, or found the first message of an earlier call with the same key. */
export type Queued = { message: MessageRow; replayed: boolean; jobId: string | null };

/** The message kind as the window rules and the table name it. */
function kindOf(v: z.output<typeof SendMessageInput>): { kind: ContentKind; type: string } {
  if (v.template) return { kind: 'template', type: 'template' };
  if (v.media_url) return { kind: 'media', type: v.media_type ?? mediaTypeOf(v.media_url) };
  return { kind: 'text', type: 'text' };
}

/** A media URL's kind by its extension, the way a person would guess it; documents otherwise. */
function mediaTypeOf(url: string): (typeof MEDIA_TYPES)[number] {
  const ext = new URL(url).pathname.split('.').pop()?.toLowerCase() ?? '';
  if (/^(jpe?g|png|webp|gif)$/.test(ext)) return 'image';
  if (/^(mp4|3gp|mov)$/.test(ext)) return 'video';
  if (/^(mp3|ogg|opus|aac|amr|m4a|wav)$/.test(ext)) return 'audio';
  return 'document';
}

/**
 * Checks the send and queues it as the caller: the recipient resolved (a new contact and
 * conversation for `to`), the messaging window, the plan's monthly ceiling (the insert's trigger)
 * and the job, all in one transaction. Nothing reaches the provider here. `claimSeconds`: the
 * message is inserted claimed for that long (`sending_until`), for a caller that attempts it at
 * once (sendMessage), so nobody else calls Meta for it meanwhile.
 */
export async function queueMessage(
  deps: Pick<Deps, 'db'> & { queue: Queue; now: () => Date; config: Pick<Config, 'sendRetry'> },
  principal: Principal,
  input: SendMessageInput,
  { claimSeconds }: { claimSeconds?: number } = {},
): Promise<Queued> {
  const v = parseInput(SendMessageInput, input);
  const { kind, type } = kindOf(v);
  const earlier = async () => (v.idempotency_key ? findByKey(deps, principal, v.idempotency_key) : null);
  const first = await earlier();
  if (first) return { message: first, replayed: true, jobId: null };
  try {
    return await deps.db.asPrincipal(principal, async (tx) => {
      const org = await requireCurrentOrg(tx);
      const conversation = await recipient(tx, org, v);
      deliveryFor({
        channel: v.channel,
        content: kind,
        lastInboundAt: conversation.last_inbound_at ? new Date(conversation.last_inbound_at) : null,
        sender: principal.kind === 'agent' ? 'agent' : 'person',
        now: deps.now(),
      });
      // The message's id is made here so that its job goes in first and the message last: the
      // insert takes the organization's ceiling lock and updates the conversation's row
      // (migrations 0017, 0016), which concurrent sends wait for until this transaction ends,
      // so nothing but the commit follows it.
      const id = randomUUID();
      const job = { organization_id: org, message_id: id };
      // Keyed by the message: the sweep finds its job from the row (docs/jobs.md "The sweep").
      const jobId = await deps.queue.enqueue(tx, 'send-message', job, {
        startAfter: deps.config.sendRetry.firstRetrySeconds,
        key: sendKey(job),
      });
      const [row] = await tx.query<{ r: MessageRow }>(
        'select to_jsonb(m) as r from app.queue_message($1, $2, $3, $4, $5, $6, $7, $8, $9) m',
        [
          org,
          conversation.id,
          type,
          v.text ?? v.caption ?? null,
          v.media_url ?? null,
          v.template ? JSON.stringify(v.template) : null,
          v.idempotency_key ?? null,
          claimSeconds ?? null,
          id,
        ],
      );
      if (!row) throw notFound('conversation');
      return { message: row.r, replayed: false, jobId };
    });
  } catch (err) {
    // Two calls with one key at once: the loser's insert hits the unique key; answer the winner's.
    if ((err as { constraint?: string }).constraint === 'messages_idempotency_key') {
      const winner = await earlier();
      if (winner) return { message: winner, replayed: true, jobId: null };
    }
    throw err;
  }
}

async function findByKey(deps: Pick<Deps, 'db'>, principal: Principal, key: string) {
  const [row] = await deps.db.asPrincipal(
    principal,
    async (tx) => {
      const org = await requireCurrentOrg(tx);
      return tx.query<{ r: MessageRow }>(
        `select to_jsonb(m) as r from public.messages m
          where m.organization_id = $1 and m.idempotency_key = $2 and m.direction = 'out'`,
        [org, key],
      );
    },
    { readOnly: true },
  );
  return row?.r ?? null;
}

/** The conversation the message goes to: named, or the contact's on the channel's account. */
async function recipient(
  tx: Queryable,
  org: string,
  v: z.output<typeof SendMessageInput>,
): Promise<Conversation> {
  if (v.conversation_id) {
    const [row] = await tx.query<{ r: Conversation; live: boolean; account: SendingAccount }>(
      `select to_jsonb(v) as r, a.disconnected_at is null as live, ${SENDING_ACCOUNT} as account
         from public.conversations v join public.connected_accounts a
           on a.organization_id = v.organization_id and a.id = v.account_id
        where v.organization_id = $1 and v.id = $2`,
      [org, v.conversation_id],
    );
    if (!row) throw notFound('conversation');
    if (row.r.channel !== v.channel)
      throw invalidField('channel', `This conversation runs over ${row.r.channel}, not ${v.channel}`);
    if (!row.live) throw notConnected(v.channel, 'The account of this conversation was disconnected');
    refuseIfNeedsReconnect(row.account);
    return row.r;
  }
  if (v.to) {
    const account = await sendingAccount(tx, org, v.channel, v.account_id);
    // The account was just read as the channel's: conversationFor need not look it up again.
    return (await conversationFor(tx, org, account, { channel: v.channel, id: v.to }, v.channel))
      .conversation;
  }
  const column = IDENTITY_COLUMN[v.channel];
  const [contact] = await tx.query<{ id: string; identity: string | null }>(
    `select c.id, c.${column} as identity from public.contacts c where c.organization_id = $1 and c.id = $2`,
    [org, v.contact_id],
  );
  if (!contact) throw notFound('contact');
  const account = await sendingAccount(tx, org, v.channel, v.account_id);
  if (!contact.identity) {
    if (v.channel !== 'whatsapp')
      throw invalidField(
        'contact_id',
        `This contact has no ${column}: they must write to you on ${v.channel} first`,
      );
    // WhatsApp reaches a phone number. The contact that already has it as its WhatsApp id (one who
    // wrote in) is who that number reaches; otherwise the number becomes this contact's (digits, as wa_id).
    const [found] = await tx.query<{ holder: string | null; phone: string | null }>(
      `select c.phone, (select h.id from public.contacts h
                         where h.organization_id = c.organization_id and h.whatsapp_id = substr(c.phone, 2)) as holder
         from public.contacts c where c.organization_id = $1 and c.id = $2`,
      [org, contact.id],
    );
    if (!found?.phone) throw invalidField('contact_id', 'This contact has no phone number or whatsapp_id');
    if (found.holder) return openConversation(tx, org, account, found.holder);
    await tx.query(
      `update public.contacts c set whatsapp_id = substr(c.phone, 2)
        where c.organization_id = $1 and c.id = $2 and c.whatsapp_id is null`,
      [org, contact.id],
    );
  }
  return openConversation(tx, org, account, contact.id);
}

/** The connected account that sends on `channel`: the one named, or the only one connected. */
async function sendingAccount(tx: Queryable, org: string, channel: MessagingChannel, named?: string) {
  // Accounts that need a reconnect are still the channel's: a send on one is refused by name
  // (account_needs_reconnect), not answered as if nothing were connected.
  const rows = await tx.query<{ id: string; account: SendingAccount }>(
    `select a.id, ${SENDING_ACCOUNT} as account from public.connected_accounts a
      where a.organization_id = $1 and a.provider = $2 and a.status <> 'disconnected'
        and ($3::uuid is null or a.id = $3::uuid)
      order by a.created_at, a.id limit 2`,
    [org, PROVIDER_OF[channel], named ?? null],
  );
  if (rows.length === 0)
    throw named
      ? notFound('connected account')
      : notConnected(
          channel,
          `No ${PROVIDER_OF[channel]} account is connected yet: an owner or admin connects one in Settings, Connected accounts`,
        );
  if (rows.length > 1)
    throw invalidField('account_id', `Several ${PROVIDER_OF[channel]} accounts are connected: name one`);
  const row = rows[0] as { id: string; account: SendingAccount };
  refuseIfNeedsReconnect(row.account);
  return row.id;
}

type SendingAccount = {
  id: string;
  provider: string;
  external_id: string;
  name: string | null;
  status: string;
  reason: string | null;
};
const SENDING_ACCOUNT = `jsonb_build_object('id', a.id, 'provider', a.provider, 'external_id', a.external_id,
  'name', a.name, 'status', a.status, 'reason', a.needs_reconnect_reason)`;

/** A send on an account whose token stopped working is refused at once, naming the account. */
function refuseIfNeedsReconnect(account: SendingAccount) {
  if (account.status === 'needs_reconnect') throw accountNeedsReconnect(account);
}

const notConnected = (channel: MessagingChannel, message: string) =>
  new AppError(409, 'channel_not_connected', message, {
    channel,
    provider: PROVIDER_OF[channel],
    connect: '/functions/v1/connected-accounts',
  });

/**
 * A plan without outbound messages (free) is refused before anything else, naming the cheapest
 * plan that has them; the insert's trigger still enforces every ceiling, races included.
 */
export async function requireMessagingPlan(deps: Pick<Deps, 'plans'>, principal: Principal): Promise<void> {
  const org = claimedOrganization(principal);
  const plan = org ? await deps.plans.forOrganization(org) : null;
  if (plan?.limits.outbound_messages !== 0) return;
  const upgrade = (await deps.plans.all()).find((p) => p.limits.outbound_messages !== 0) ?? null;
  throw new AppError(
    403,
    'plan_limit_exceeded',
    `The ${plan.name} plan includes no outbound messages; the ${upgrade?.name ?? 'a higher'} plan allows ${upgrade?.limits.outbound_messages ?? 'more'} a month. A person can upgrade the plan.`,
    {
      resource: 'outbound_messages',
      limit: 0,
      used: 0,
      plan: plan.slug,
      minimum_plan: upgrade?.slug ?? null,
    },
  );
}

export type SendDeps = Pick<Deps, 'db' | 'plans' | 'secrets'> & {
  queue: Queue;
  now: () => Date;
  config: Config;
  log: Logger;
  /** Counts each attempt's outcome (src/platform/metrics). */
  metrics?: Metrics;
};

/** sent: Meta took it. queued: it will be retried. failed: refused for good. */
export type Sent = { message: MessageRow; state: 'sent' | 'queued' | 'failed'; replayed: boolean };

const stateOf = (m: MessageRow): Sent['state'] =>
  m.status === 'queued' ? 'queued' : m.status === 'failed' ? 'failed' : 'sent';

/**
 * Checks the plan (first: a free plan hears which plan has messaging) and the agent's scope,
 * queues the message, then makes the first attempt at once. Success or a permanent refusal
 * completes the job; a transient failure leaves it to the worker, which retries it after
 * SEND_FIRST_RETRY_SECONDS (the job's delayed start) and then with backoff. A replayed idempotency key answers the
 * first message as it stands.
 */
export async function sendMessage(
  deps: SendDeps,
  principal: Principal,
  input: SendMessageInput,
): Promise<Sent> {
  await requireMessagingPlan(deps, principal);
  // Agents need write; people are left to the database (any member may send).
  await requireScope(deps, principal, 'write', 'Sending a message');
  const d = deliverDeps(deps);
  const queued = await queueMessage(deps, principal, input, { claimSeconds: d.claimSeconds });
  if (queued.replayed) return { message: queued.message, state: stateOf(queued.message), replayed: true };
  const job = { organization_id: queued.message.organization_id, message_id: queued.message.id };
  const { jobId } = queued;
  let completed = false;
  let delivery: Delivery;
  try {
    delivery = await deliver(d, job, {
      claimedUntil: queued.message.sending_until as string,
      // The job is completed in the transaction that records the answer: one commit for both.
      settled: async (tx) => {
        if (!jobId) return;
        await deps.queue.complete('send-message', jobId, tx);
        completed = true;
      },
    });
  } catch (err) {
    // Committed with its job: the worker sends it. The caller hears it is queued.
    logFailure(
      deps.log,
      err,
      { message_id: job.message_id },
      'first send attempt failed; the worker retries',
    );
    return { message: queued.message, state: 'queued', replayed: false };
  }
  if (delivery.state !== 'retry' && jobId && !completed)
    await deps.queue.complete('send-message', jobId).catch((err) => {
      // Harmless: the job finds the message settled and does nothing.
      logFailure(deps.log, err, { message_id: job.message_id }, 'could not complete the send job');
    });
  return {
    message: delivery.message,
    state: delivery.state === 'retry' ? 'queued' : stateOf(delivery.message),
    replayed: false,
  };
}

/** A failed send as the caller hears it: 502 with Meta's code, the message id to look it up. */
export function providerError(sent: Sent): AppError {
  const e = (sent.message.error ?? {}) as Record<string, unknown>;
  return new AppError(
    502,
    'provider_error',
    `The provider refused the message: ${String(e.message ?? 'no reason given')}`,
    {
      message_id: sent.message.id,
      provider_code: e.code ?? null,
      provider_subcode: e.subcode ?? null,
      provider_type: e.type ?? null,
      fbtrace_id: e.fbtrace_id ?? null,
    },
  );
}

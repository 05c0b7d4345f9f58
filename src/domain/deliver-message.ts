import {
  createGraphClient,
  type GraphClient,
  type GraphFailure,
  type GraphResult,
} from '../channels/graph-client.ts';
import { refusedHere } from '../channels/graph-errors.ts';
import type { MessagingChannel } from '../channels/inbound-event.ts';
import type { Config } from '../config.ts';
import type { Queryable } from '../platform/db/database.ts';
import type { Metrics } from '../platform/metrics/metrics.ts';
import type { JobPolicy } from '../platform/queue/queue.ts';
import { SecretError } from '../platform/secrets.ts';
import { accountById } from './connected-accounts.ts';
import { markNeedsReconnect, reasonSentence } from './connection-health.ts';
import type { Deps } from './deps.ts';
import { deliveryFor } from './messaging-window.ts';

// Delivering a queued outbound message: the one call to Meta, by the request that queued it
// (at once) or by the worker (retries). Both go through `deliver`, which first claims the message
// (`sending_until`, one caller at a time, however slow the other is), calls Meta only for a
// message still `queued`, and records what Meta answered. The worker's job is src/jobs/send-message.ts.

export type MessageRow = Record<string, unknown> & {
  organization_id: string;
  id: string;
  status: 'queued' | 'sent' | 'delivered' | 'read' | 'failed';
};

export type DeliverDeps = Pick<Deps, 'db' | 'secrets'> & {
  graph: GraphClient;
  now: () => Date;
  /** How long a claim holds: past the Graph deadline, so only a dead caller's claim runs out. */
  claimSeconds: number;
  /** Told how each attempt ended (a Delivery's state, or `error` when it threw): the sends metric. */
  outcome?: (state: Delivery['state'] | 'error') => void;
};
export type SendJob = { organization_id: string; message_id: string };

/** sent: Meta took it. failed: refused for good (recorded). retry: try again later. settled: not queued any more. */
export type Delivery =
  | { state: 'sent' | 'failed' | 'settled'; message: MessageRow }
  | { state: 'retry'; message: MessageRow; error: GraphFailure['error'] };

type Pending = MessageRow & {
  channel: MessagingChannel;
  provider: 'whatsapp' | 'facebook' | 'instagram';
  account_id: string;
  external_id: string;
  recipient: string | null;
  last_inbound_at: string | null;
  /** Why the account needs a reconnect (src/domain/connection-health.ts); null when it does not. */
  needs_reconnect: string | null;
};

// What the call needs besides the message: its channel, account and recipient.
const PENDING = `to_jsonb(m) || jsonb_build_object(
    'channel', v.channel, 'provider', a.provider, 'external_id', a.external_id,
    'last_inbound_at', v.last_inbound_at,
    'needs_reconnect', case when a.needs_reconnect_at is not null
                            then coalesce(a.needs_reconnect_reason, 'Its token stopped working.') end,
    'recipient', case v.channel when 'whatsapp' then c.whatsapp_id when 'messenger' then c.facebook_psid
                                else c.instagram_id end) as r`;
const WITH_CONVERSATION = `join public.conversations v on v.organization_id = m.organization_id and v.id = m.conversation_id
  join public.contacts c on c.organization_id = v.organization_id and c.id = v.contact_id
  join app.connected_accounts a on a.organization_id = m.organization_id and a.id = m.account_id`;

// Claims the message while it is queued and unclaimed (or its claim ran out), with what the call needs.
const CLAIM = `with claimed as (
  update public.messages m set sending_until = now() + make_interval(secs => $3)
   where m.organization_id = $1 and m.id = $2 and m.direction = 'out' and m.status = 'queued'
     and (m.sending_until is null or m.sending_until < now())
  returning m.*)
select ${PENDING} from claimed m ${WITH_CONVERSATION}`;

// The message its queuing request claimed (app.queue_message's claim_seconds), while that claim,
// to the microsecond, is the message's and has not run out: then no one else calls.
const CLAIMED = `select ${PENDING} from public.messages m ${WITH_CONVERSATION}
  where m.organization_id = $1 and m.id = $2 and m.direction = 'out' and m.status = 'queued'
    and m.sending_until = $3::timestamptz and m.sending_until > now()`;

/**
 * How an attempt starts and ends besides the defaults. `claimedUntil`: the caller queued the
 * message claimed until then (the request's own first attempt), so the attempt reads it instead
 * of claiming it. `settled`: runs in the transaction that records a sent or failed message (the
 * request completes the message's job there, so one commit records both). If it throws, its
 * statements are rolled back and the answer is recorded all the same.
 */
export type AttemptOptions = { claimedUntil?: string; settled?: (tx: Queryable) => Promise<void> };

/** One attempt at a message (service path: the job names the organization). */
export async function deliver(deps: DeliverDeps, job: SendJob, opts: AttemptOptions = {}): Promise<Delivery> {
  if (!deps.outcome) return attempt(deps, job, opts);
  try {
    const d = await attempt(deps, job, opts);
    deps.outcome(d.state);
    return d;
  } catch (err) {
    deps.outcome('error');
    throw err;
  }
}

async function attempt(deps: DeliverDeps, job: SendJob, opts: AttemptOptions): Promise<Delivery> {
  const [row] = await deps.db.query<{ r: Pending }>(opts.claimedUntil === undefined ? CLAIM : CLAIMED, [
    job.organization_id,
    job.message_id,
    opts.claimedUntil ?? deps.claimSeconds,
  ]);
  const m = row?.r;
  if (!m) {
    const now = await current(deps, job);
    if (!now) throw new Error(`message ${job.message_id} is gone`); // purged: the job retries, then gives up
    if (now.status !== 'queued') return { state: 'settled', message: now };
    // Another caller holds the claim: its outcome will be recorded; look again later.
    return { state: 'retry', message: now, error: { ...IN_PROGRESS } };
  }
  let result: GraphResult;
  try {
    result = await call(deps, m);
  } catch (err) {
    // Released, so the next attempt need not wait for the claim to run out.
    await deps.db.query(
      'update public.messages m set sending_until = null where m.organization_id = $1 and m.id = $2',
      [job.organization_id, job.message_id],
    );
    throw err;
  }
  if (result.ok)
    return settle(
      deps,
      job,
      'sent',
      'sent_at = now(), provider_message_id = $3, error = null',
      [result.providerMessageId],
      opts.settled,
    );
  if (result.transient) {
    const message = await record(deps.db, job, 'error = $3', [JSON.stringify(providerError(result))]);
    return { state: 'retry', message: message ?? m, error: result.error };
  }
  // Meta's "invalid OAuth access token": the account needs a reconnect from now on, so the next
  // send fails at once instead of asking Meta again (docs/conversations.md "Connection health").
  if (result.error.code === 190)
    await markNeedsReconnect(
      deps.db,
      m.organization_id,
      m.account_id as string,
      reasonSentence(m.provider, result.error.message),
    );
  return fail(deps, job, providerError(result), opts.settled);
}

const IN_PROGRESS = {
  code: null,
  subcode: null,
  type: 'in_progress',
  message: 'another attempt at this message is under way',
  fbtrace_id: null,
};

const current = async (deps: DeliverDeps, job: SendJob) =>
  (
    await deps.db.query<{ r: MessageRow }>(
      'select to_jsonb(m) as r from public.messages m where m.organization_id = $1 and m.id = $2',
      [job.organization_id, job.message_id],
    )
  )[0]?.r ?? null;

/** Gives the message up as failed with `error`: the claim holder's, after a permanent refusal. */
export async function fail(
  deps: DeliverDeps,
  job: SendJob,
  error: Record<string, unknown>,
  settled?: AttemptOptions['settled'],
): Promise<Delivery> {
  return settle(deps, job, 'failed', 'failed_at = now(), error = $3', [JSON.stringify(error)], settled);
}

async function settle(
  deps: DeliverDeps,
  job: SendJob,
  status: 'sent' | 'failed',
  set: string,
  values: unknown[],
  settled?: AttemptOptions['settled'],
) {
  const recordIn = (q: Queryable) => record(q, job, `status = '${status}', ${set}`, values);
  const message = settled
    ? await deps.db.transaction(async (tx) => {
        const m = await recordIn(tx);
        if (!m) return m;
        // In a savepoint: whatever `settled` does, the answer is recorded (Meta took it or refused
        // it; losing that would send it again).
        const savepoint = tx.query('savepoint settled');
        savepoint.catch(() => {}); // awaited below; it leaves with settled's statements
        try {
          await settled(tx);
          await savepoint;
          await tx.query('release savepoint settled');
        } catch {
          await tx.query('rollback to savepoint settled');
        }
        return m;
      })
    : await recordIn(deps.db);
  if (message) return { state: status, message } as const;
  // Someone else settled it meanwhile: answer what it became.
  const [row] = await deps.db.query<{ r: MessageRow }>(
    'select to_jsonb(m) as r from public.messages m where m.organization_id = $1 and m.id = $2',
    [job.organization_id, job.message_id],
  );
  return { state: 'settled', message: row?.r as MessageRow } as const;
}

/**
 * Gives the message up from outside an attempt (its job gave up, or the sweep found the job failed
 * or gone): only while it is queued and no live attempt holds its claim. A live attempt records
 * its own outcome, and failing the message under it could contradict a send Meta took: then this
 * throws, and the job (or the next sweep) looks again once the claim is over.
 */
export async function giveUp(deps: DeliverDeps, job: SendJob, error: Record<string, unknown>) {
  const failed = await record(
    deps.db,
    job,
    `status = 'failed', failed_at = now(), error = $3`,
    [JSON.stringify(error)],
    { unclaimed: true },
  );
  if (failed) return;
  if ((await current(deps, job))?.status === 'queued')
    throw new Error(`message ${job.message_id} is held by a live attempt; it records its own outcome`);
}

/** Updates the message while it is still queued (and, `unclaimed`, held by no live attempt); null when it is not. */
async function record(
  q: Queryable,
  job: SendJob,
  set: string,
  values: unknown[],
  { unclaimed = false } = {},
) {
  const [row] = await q.query<{ r: MessageRow }>(
    `update public.messages m set ${set}, sending_until = null
      where m.organization_id = $1 and m.id = $2 and m.status = 'queued'
        ${unclaimed ? 'and (m.sending_until is null or m.sending_until < now())' : ''}
     returning to_jsonb(m) as r`,
    [job.organization_id, job.message_id, ...values],
  );
  return row?.r ?? null;
}

/** What `error` holds: Meta's code and words, or ours when Meta never answered. */
const providerError = (f: GraphFailure) => ({ ...f.error, http_status: f.status, transient: f.transient });

async function call(deps: DeliverDeps, m: Pending): Promise<GraphResult> {
  // The token is known not to work: fail now, with nothing sent to Meta and no retries.
  if (m.needs_reconnect) return refusedHere('account_needs_reconnect', m.needs_reconnect);
  let account: Awaited<ReturnType<typeof accountById>>;
  try {
    // The message's own account, by its key: other organizations may have the same Page or number
    // connected with their own tokens.
    account = await accountById(deps, m.organization_id, m.account_id);
  } catch (err) {
    // Sealed under another key (a worker without the shared SECRETS_KEY): no retry will open it.
    if (err instanceof SecretError) return refusedHere('secrets_key_mismatch', err.message);
    throw err;
  }
  if (!account) return refusedHere('account_disconnected', 'The sending account was disconnected');
  if (!m.recipient) return refusedHere('no_recipient', `The contact has no ${m.channel} id`);
  let humanAgent = false;
  if (m.type !== 'template') {
    try {
      const d = deliveryFor({
        channel: m.channel,
        content: m.type === 'text' ? 'text' : 'media',
        lastInboundAt: m.last_inbound_at ? new Date(m.last_inbound_at) : null,
        sender: m.sent_by_agent_key_id ? 'agent' : 'person',
        now: deps.now(),
      });
      humanAgent = d.messagingType === 'MESSAGE_TAG';
    } catch (err) {
      return refusedHere('outside_messaging_window', (err as Error).message);
    }
  }
  const to = { externalId: account.external_id, accessToken: account.access_token };
  const body = m.body as string | null;
  const url = m.media_url as string | null;
  if (m.channel === 'whatsapp') {
    if (m.type === 'template')
      return deps.graph.sendWhatsApp(to, m.recipient, { type: 'template', template: m.template as never });
    if (m.type === 'text')
      return deps.graph.sendWhatsApp(to, m.recipient, { type: 'text', text: body ?? '' });
    return deps.graph.sendWhatsApp(to, m.recipient, {
      type: m.type as 'image',
      url: url ?? '',
      ...(body ? { caption: body } : {}),
    });
  }
  const content =
    m.type === 'text'
      ? { type: 'text' as const, text: body ?? '' }
      : { type: m.type as 'image', url: url ?? '' };
  return m.channel === 'messenger'
    ? deps.graph.sendMessenger(to, m.recipient, content, { humanAgent })
    : deps.graph.sendInstagram(to, m.recipient, content, { humanAgent });
}

/** What delivering needs, from the service's configuration and parts. */
export const deliverDeps = (
  d: Pick<Deps, 'db' | 'secrets'> & { config: Config; now: () => Date; metrics?: Pick<Metrics, 'sends'> },
): DeliverDeps => {
  const sends = d.metrics?.sends;
  return {
    db: d.db,
    secrets: d.secrets,
    now: d.now,
    graph: createGraphClient(d.config.graph),
    claimSeconds: claimSeconds(d.config),
    outcome: sends && ((state) => sends.inc({ outcome: state })),
  };
};

/** A claim, and a job's lease: the Graph deadline and a margin for recording the answer. */
const claimSeconds = (config: Config) => Math.ceil(config.graph.timeoutMs / 1000) + 30;

/** Retries with backoff for hours (docs/jobs.md); a run outliving a Graph call's deadline is dead. */
export const sendPolicy = (config: Config): JobPolicy => ({
  attempts: config.sendRetry.attempts,
  backoffSeconds: config.sendRetry.backoffSeconds,
  maxBackoffSeconds: 1800,
  maxAgeSeconds: config.sendRetry.maxAgeSeconds,
  leaseSeconds: claimSeconds(config),
});

/** The key a message's job is enqueued with (one job per message): `SEND_UNSETTLED` builds the same. */
export const sendKey = (job: SendJob) => `${job.organization_id}/${job.message_id}`;

// The Graph API as the service uses it: one POST per outbound message, over `fetch` with a
// deadline, answering either Meta's message id or a classified failure (graph-errors.ts). It never
// throws for anything Meta or the network does, and it never logs: the caller records the result.
// The access token travels only in the Authorization header; it is never put into a URL (where
// proxies log it) or into a returned error.
import { fairDeadline } from '../platform/net/fair-deadline.ts';
import { answeredFailure, type GraphFailure, refusedHere, unansweredFailure } from './graph-errors.ts';
import {
  type InstagramContent,
  instagramBody,
  type MessagingOptions,
  type MessengerContent,
  messengerBody,
  type WhatsAppContent,
  whatsAppBody,
} from './graph-messages.ts';

export type { GraphErrorInfo, GraphFailure } from './graph-errors.ts';
export type * from './graph-messages.ts';

export type GraphClientConfig = {
  /** https://graph.facebook.com (WhatsApp, Messenger), or the fake's address. */
  url: string;
  /** https://graph.instagram.com (Instagram API with Instagram Login), or the fake's address. */
  instagramUrl: string;
  /** v26.0 */
  version: string;
  /** Deadline for one call, answer body included. */
  timeoutMs: number;
};

/** The sending side of a connected account: whose id goes in the path, whose token authorizes. */
export type GraphAccount = { externalId: string; accessToken: string };

export type GraphSuccess = {
  ok: true;
  /** WhatsApp's `wamid.…`, Messenger's `m_…`, Instagram's message id. */
  providerMessageId: string;
  /** WhatsApp's `wa_id` or the Page-/Instagram-scoped id Meta answers with, when it does. */
  recipientId: string | null;
};

export type GraphResult = GraphSuccess | GraphFailure;

export type GraphClient = {
  sendWhatsApp(account: GraphAccount, to: string, content: WhatsAppContent): Promise<GraphResult>;
  sendMessenger(
    account: GraphAccount,
    psid: string,
    content: MessengerContent,
    options?: MessagingOptions,
  ): Promise<GraphResult>;
  sendInstagram(
    account: GraphAccount,
    igsid: string,
    content: InstagramContent,
    options?: MessagingOptions,
  ): Promise<GraphResult>;
};

export function createGraphClient(config: GraphClientConfig): GraphClient {
  const base = (url: string) => `${url.replace(/\/+$/, '')}/${config.version}`;
  const graph = base(config.url);
  const instagram = base(config.instagramUrl);
  const post = (root: string, account: GraphAccount, body: unknown) =>
    callGraph(
      'POST',
      `${root}/${encodeURIComponent(account.externalId)}/messages`,
      account.accessToken,
      body,
      config,
    );

  return {
    async sendWhatsApp(account, to, content) {
      const answer = await post(graph, account, whatsAppBody(to, content));
      if (!answer.ok) return answer;
      // {messaging_product, contacts: [{input, wa_id}], messages: [{id, message_status?}]}
      const b = answer.body as { contacts?: { wa_id?: unknown }[]; messages?: { id?: unknown }[] };
      const id = b?.messages?.[0]?.id;
      const waId = b?.contacts?.[0]?.wa_id;
      return success(id, typeof waId === 'string' ? waId : null, answer.status);
    },
    async sendMessenger(account, psid, content, options) {
      return messagingResult(await post(graph, account, messengerBody(psid, content, options)));
    },
    async sendInstagram(account, igsid, content, options) {
      return messagingResult(await post(instagram, account, instagramBody(igsid, content, options)));
    },
  };
}

// {recipient_id, message_id}: the Send API's answer, the same for Messenger and Instagram.
function messagingResult(answer: Answer): GraphResult {
  if (!answer.ok) return answer;
  const b = answer.body as { recipient_id?: unknown; message_id?: unknown };
  return success(b?.message_id, typeof b?.recipient_id === 'string' ? b.recipient_id : null, answer.status);
}

function success(id: unknown, recipientId: string | null, status: number): GraphResult {
  if (typeof id === 'string' && id) return { ok: true, providerMessageId: id, recipientId };
  // A 2xx without a message id: Meta may have sent it. Retrying risks sending twice, so this is
  // not transient; the failure keeps the status for whoever looks into it.
  return {
    ok: false,
    transient: false,
    status,
    error: {
      code: null,
      subcode: null,
      type: 'invalid_response',
      message: 'Graph answered success without a message id',
      fbtrace_id: null,
    },
  };
}

/** A 2xx with its parsed body, or the classified failure. */
export type Answer = { ok: true; status: number; body: unknown } | GraphFailure;

/**
 * One Graph call: a JSON body for POST, none for GET (its parameters are in `url`). Shared by the
 * messaging client above and the publishing client (graph-publish.ts).
 */
export async function callGraph(
  method: 'GET' | 'POST',
  url: string,
  token: string,
  body: unknown,
  config: Pick<GraphClientConfig, 'timeoutMs'>,
): Promise<Answer> {
  let status: number;
  let text: string;
  // Counted in time the Graph API had to answer, not time this process was busy (fair-deadline.ts).
  const deadline = fairDeadline(config.timeoutMs);
  try {
    const res = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
      },
      ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
      // Covers the body too: a server that sends headers and then stalls still times out.
      signal: deadline.signal,
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      return unansweredFailure('timeout', `no answer from the Graph API within ${config.timeoutMs} ms`);
    }
    // undici says "fetch failed" and puts the reason (ECONNREFUSED, ENOTFOUND, …) in `cause`.
    if (e.cause?.code)
      return unansweredFailure('network_error', `could not reach the Graph API: ${e.cause.code}`);
    // Anything else failed before a byte left (a header that cannot carry the token): its message
    // may quote the token, and no retry will build the request either.
    return refusedHere(
      'invalid_request',
      'the request could not be built (is the access token well-formed?)',
    );
  } finally {
    deadline.clear();
  }
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {}
  if (status >= 200 && status < 300) return { ok: true, status, body: parsed };
  return scrub(answeredFailure(status, parsed, text), token);
}

/** Graph does not echo tokens in its messages, but a proxy's error page might: never pass one on. */
function scrub(failure: GraphFailure, token: string): GraphFailure {
  // Real tokens are long; replacing a two-letter development token would garble every message.
  if (token.length < 8) return failure;
  const clean = (s: string) => s.split(token).join('[redacted]');
  const { details, ...rest } = failure.error;
  return {
    ...failure,
    error: {
      ...rest,
      message: clean(rest.message),
      ...(details === undefined ? {} : { details: clean(details) }),
    },
  };
}

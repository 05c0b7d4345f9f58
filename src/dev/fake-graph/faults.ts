// The fake's answers when something is wrong: Graph's error body `{error: {message, type, code,
// error_subcode, fbtrace_id}}` with the status, code and wording Meta documents for each case
// (sources in docs/graph-api.md). WhatsApp's Cloud API puts `error_data.details` beside the code
// and sends no subcode (v16.0+); Messenger and Instagram send subcodes. Development and tests only.
import { randomBytes } from 'node:crypto';

export type FakeChannel = 'whatsapp' | 'messenger' | 'instagram';

/** A canned failure: what `failNext` makes the fake answer instead of sending. */
export type FailKind =
  /** 500, Graph's temporary error (WhatsApp 131000; Messenger/Instagram code 2, is_transient). */
  | 'server'
  /** 503, code 2: service temporarily unavailable. */
  | 'unavailable'
  /** Meta's throttling code with Meta's status (WhatsApp 130429; Messenger/Instagram 613), 400. */
  | 'throttle'
  /** A bare HTTP 429 with code 4 (application request limit), as a proxy or older Graph versions answer. */
  | 'http429'
  /** Invalid or expired access token: code 190 (WhatsApp 401; Graph 400). */
  | 'token'
  /** The recipient cannot get messages (WhatsApp 131026; Messenger/Instagram 551). */
  | 'recipient'
  /** Outside the messaging window (WhatsApp 131047; Messenger 10/2018278; Instagram 10/2534022). */
  | 'window'
  /** Invalid parameter, code 100. */
  | 'invalid'
  /** Never answer: the client's deadline is what ends the call. */
  | 'hang'
  /** Close the connection without answering: the client sees a network error. */
  | 'drop'
  /** Do what was asked (send, publish), then close the connection: the answer is lost. */
  | 'lost'
  /** Answer normally: lets a test aim a failure at a later request (`failNext(1, 'pass')` first). */
  | 'pass';

/**
 * A Graph error answer, or any other answer a test wants the fake to give once. A string body is
 * sent as is (text/html), as a proxy's error page would be; anything else as JSON.
 */
export type Fault = { status: number; body: unknown };

export const fbtraceId = () => `A${randomBytes(16).toString('base64url').slice(0, 22)}`;

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** WhatsApp message ids are `wamid.` and base64 of a protobuf-ish blob; only the prefix matters to clients. */
export const wamid = () => `wamid.${b64(`HBgL${randomBytes(24).toString('hex')}`)}`;
/** Messenger message ids start with `m_`. */
export const messengerMid = () => `m_${randomBytes(33).toString('base64url')}`;
/** Instagram's are base64 of `ig_message_item:…`. */
export const instagramMid = () => b64(`ig_message_item:1:IGMessageThread:${randomBytes(12).toString('hex')}`);

/** Graph's error body. `extra` carries error_data (WhatsApp) or is_transient (Graph). */
export function graphError(
  status: number,
  code: number,
  message: string,
  type: string,
  subcode?: number,
  extra: Record<string, unknown> = {},
): Fault {
  return {
    status,
    body: {
      error: {
        message,
        type,
        code,
        ...extra,
        ...(subcode === undefined ? {} : { error_subcode: subcode }),
        fbtrace_id: fbtraceId(),
      },
    },
  };
}

/** WhatsApp's shape: "(#code) Title", OAuthException, `error_data: {messaging_product, details}`. */
export function whatsAppError(status: number, code: number, title: string, details: string): Fault {
  return graphError(status, code, `(#${code}) ${title}`, 'OAuthException', undefined, {
    error_data: { messaging_product: 'whatsapp', details },
  });
}

export function invalidToken(channel: FakeChannel): Fault {
  return channel === 'whatsapp'
    ? graphError(401, 190, 'Error validating access token: Session has expired.', 'OAuthException', 463)
    : graphError(400, 190, 'Invalid OAuth access token - Cannot parse access token', 'OAuthException');
}

export function invalidParameter(channel: FakeChannel, details: string): Fault {
  return channel === 'whatsapp'
    ? whatsAppError(400, 100, 'Invalid parameter', details)
    : graphError(400, 100, `(#100) ${details}`, 'OAuthException');
}

/** Graph's answer for a path id it does not know or the token cannot reach. */
export function unknownObject(id: string): Fault {
  return graphError(
    400,
    100,
    `Unsupported post request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
    'GraphMethodException',
    33,
  );
}

export function cannedFault(
  kind: Exclude<FailKind, 'hang' | 'drop' | 'lost' | 'pass'>,
  channel: FakeChannel,
): Fault {
  const wa = channel === 'whatsapp';
  switch (kind) {
    case 'server':
      return wa
        ? whatsAppError(
            500,
            131000,
            'Something went wrong',
            'Message failed to send because of an unknown error.',
          )
        : graphError(
            500,
            2,
            'An unexpected error has occurred. Please retry your request later.',
            'OAuthException',
            undefined,
            { is_transient: true },
          );
    case 'unavailable':
      return graphError(503, 2, 'Service temporarily unavailable', 'OAuthException', undefined, {
        is_transient: true,
      });
    case 'throttle':
      return wa
        ? whatsAppError(
            400,
            130429,
            'Rate limit hit',
            'Message failed to send because there were too many messages sent from this phone number in a short period of time',
          )
        : graphError(400, 613, '(#613) Calls to this API have exceeded the rate limit.', 'OAuthException');
    case 'http429':
      return graphError(429, 4, '(#4) Application request limit reached', 'OAuthException', undefined, {
        is_transient: true,
      });
    case 'token':
      return invalidToken(channel);
    case 'recipient':
      return wa
        ? whatsAppError(
            400,
            131026,
            'Message undeliverable',
            'Message failed to send because the recipient is not on WhatsApp, has not accepted the Terms of Service, or uses an old WhatsApp version.',
          )
        : graphError(400, 551, "This person isn't available right now.", 'OAuthException', 1545041);
    case 'window':
      return wa
        ? whatsAppError(
            400,
            131047,
            'Re-engagement message',
            'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
          )
        : graphError(
            400,
            10,
            '(#10) This message is sent outside of allowed window.',
            'OAuthException',
            channel === 'messenger' ? 2018278 : 2534022,
          );
    case 'invalid':
      return invalidParameter(channel, 'Invalid parameter');
  }
}

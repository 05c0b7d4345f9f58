import { AppError } from '../platform/errors.ts';

/**
 * When a business may write to a customer, as Meta enforces it. Refusing here, before any call,
 * keeps a message the platform would reject out of the queue and out of the monthly count.
 * WhatsApp: free-form messages within 24 hours of the customer's last message, otherwise only an
 * approved template. Messenger and Instagram: 24 hours of standard messaging; a person (not an
 * agent) may answer up to 7 days with the HUMAN_AGENT tag; there are no templates.
 */
export type Channel = 'whatsapp' | 'messenger' | 'instagram';
export type ContentKind = 'text' | 'media' | 'template';

const HOUR = 3_600_000;
const STANDARD_WINDOW = 24 * HOUR;
const HUMAN_AGENT_WINDOW = 7 * 24 * HOUR;

export type Delivery =
  | { messagingType: 'RESPONSE' }
  | { messagingType: 'MESSAGE_TAG'; tag: 'HUMAN_AGENT' }
  | { messagingType: 'TEMPLATE' };

export type WindowQuestion = {
  channel: Channel;
  content: ContentKind;
  /** The customer's last inbound message; null when they never wrote. */
  lastInboundAt: Date | null;
  /** People may use Meta's human-agent tag; agents (AI) may not. */
  sender: 'person' | 'agent';
  now: Date;
};

/** How the message may go out, or 409 outside_messaging_window saying what is allowed instead. */
export function deliveryFor(q: WindowQuestion): Delivery {
  const age = q.lastInboundAt ? q.now.getTime() - q.lastInboundAt.getTime() : Number.POSITIVE_INFINITY;
  if (q.channel === 'whatsapp') {
    if (q.content === 'template') return { messagingType: 'TEMPLATE' };
    if (age <= STANDARD_WINDOW) return { messagingType: 'RESPONSE' };
    throw outsideWindow(q, STANDARD_WINDOW, ['template']);
  }
  if (age <= STANDARD_WINDOW) return { messagingType: 'RESPONSE' };
  if (age <= HUMAN_AGENT_WINDOW && q.sender === 'person')
    return { messagingType: 'MESSAGE_TAG', tag: 'HUMAN_AGENT' };
  throw outsideWindow(q, q.sender === 'person' ? HUMAN_AGENT_WINDOW : STANDARD_WINDOW, []);
}

function outsideWindow(q: WindowQuestion, length: number, allowed: string[]): AppError {
  const closedAt = q.lastInboundAt ? new Date(q.lastInboundAt.getTime() + length) : null;
  const when = closedAt
    ? `The messaging window closed at ${closedAt.toISOString()}`
    : 'The customer has not written yet, so no messaging window is open';
  const instead =
    q.channel === 'whatsapp'
      ? 'send an approved template ({name, language, components}) instead'
      : q.sender === 'agent' &&
          q.lastInboundAt &&
          q.now.getTime() - q.lastInboundAt.getTime() <= HUMAN_AGENT_WINDOW
        ? 'a person may still reply (with the HUMAN_AGENT tag) until 7 days after the customer’s last message'
        : 'wait for the customer to write again';
  return new AppError(409, 'outside_messaging_window', `${when}: ${instead}`, {
    channel: q.channel,
    last_inbound_at: q.lastInboundAt?.toISOString() ?? null,
    window_closed_at: closedAt?.toISOString() ?? null,
    allowed,
  });
}

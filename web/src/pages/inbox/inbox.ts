import { dateTime } from '../../lib/format';

// What the inbox reads from the service (GET /functions/v1/conversations and
// /conversations/{id}/messages, src/functions/conversations.ts) and the rules it shows people.

export const CHANNELS = ['whatsapp', 'messenger', 'instagram'] as const;
export type Channel = (typeof CHANNELS)[number];
export const STATUSES = ['open', 'pending', 'resolved', 'snoozed'] as const;

export const CHANNEL_LABEL: Record<Channel, string> = {
  whatsapp: 'WhatsApp',
  messenger: 'Messenger',
  instagram: 'Instagram',
};

/** The send function of each channel (a Facebook Page talks over Messenger). */
export const SEND_FUNCTION: Record<Channel, string> = {
  whatsapp: 'whatsapp-send-message',
  messenger: 'facebook-send-message',
  instagram: 'instagram-send-message',
};

export type Envelope<T> = {
  data: T[];
  pagination: { page: number; per_page: number; total: number; total_pages: number };
};

export type Conversation = {
  id: string;
  account_id: string;
  contact_id: string;
  channel: Channel;
  status: (typeof STATUSES)[number];
  last_message_at: string;
  last_inbound_at: string | null;
  unread_count: number;
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

export type MessageStatus = 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | 'received';

export type Message = {
  id: string;
  direction: 'in' | 'out';
  type: string;
  body: string | null;
  media_url: string | null;
  template: { name?: string; language?: string } | null;
  content: unknown;
  status: MessageStatus;
  error: Record<string, unknown> | null;
  sent_by_agent_key_id: string | null;
  received_at: string | null;
  created_at: string;
};

const HOUR = 3_600_000;

export type ReplyWindow =
  /** Free text allowed; `tagged` when it goes with Meta's HUMAN_AGENT tag (day 2 to 7). */
  | { free: true; tagged: boolean; closesAt: Date }
  /** Free text refused: why, and whether a WhatsApp template may go instead. */
  | { free: false; reason: string; templates: boolean };

/**
 * The messaging window as the service enforces it (src/domain/messaging-window.ts), for a person:
 * WhatsApp takes free text within 24 hours of the customer's last message, templates at any
 * time; Messenger and Instagram take 24 hours, then up to 7 days with the HUMAN_AGENT tag, and
 * have no templates. The service decides in the end; this only spares people a refused send.
 */
export function replyWindow(channel: Channel, lastInboundAt: string | null, now: Date): ReplyWindow {
  const templates = channel === 'whatsapp';
  if (!lastInboundAt)
    return {
      free: false,
      templates,
      reason: templates
        ? 'The customer has not written yet, so only an approved template may start the conversation.'
        : 'The customer has not written yet; they must write first.',
    };
  const last = new Date(lastInboundAt).getTime();
  const standard = new Date(last + 24 * HOUR);
  if (now < standard) return { free: true, tagged: false, closesAt: standard };
  if (!templates) {
    const tagged = new Date(last + 7 * 24 * HOUR);
    if (now < tagged) return { free: true, tagged: true, closesAt: tagged };
    return {
      free: false,
      templates,
      reason: `The window closed at ${dateTime(tagged.toISOString())}, 7 days after the customer’s last message; wait for them to write again.`,
    };
  }
  return {
    free: false,
    templates,
    reason: `The 24-hour window closed at ${dateTime(standard.toISOString())}: until the customer writes again, WhatsApp takes only an approved template.`,
  };
}

/** An idempotency key for one send; crypto.randomUUID needs a secure context, this does not. */
export function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** What a message without text says, in brief (a template, a picture, a location, …). */
export function summaryOf(m: Message): string {
  if (m.body) return m.body;
  if (m.type === 'template' && m.template)
    return `Template “${m.template.name ?? '?'}” (${m.template.language ?? '?'})`;
  const content = (m.content ?? {}) as Record<string, unknown>;
  if (m.type === 'reaction' && typeof content.emoji === 'string') return `Reacted ${content.emoji}`;
  if (m.type === 'location' && typeof content.name === 'string') return `Location: ${content.name}`;
  return `[${m.type}]`;
}

/**
 * The reason a failed message gives, in Meta's words when it sent any: a status webhook's
 * `{title, message, details}` or a send's Graph error `{message, error_data: {details}}`.
 */
export function failureReason(error: Record<string, unknown> | null): string {
  const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
  if (!error) return 'no reason given';
  const reason = text(error.message) ?? text(error.title) ?? 'no reason given';
  const data = error.error_data as { details?: unknown } | null | undefined;
  const details = text(error.details) ?? text(data?.details);
  return details && details !== reason ? `${reason}: ${details}` : reason;
}

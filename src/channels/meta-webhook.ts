import type { InboundEvent, InboundMessageType, MessagingChannel } from './inbound-event.ts';

// Meta's webhook payloads (WhatsApp Cloud API, Messenger, Instagram messaging) → the
// provider-neutral events of src/domain/inbound-messages.ts. Takes the parsed JSON body as Meta
// sends it; gives out which connected accounts it addresses (routing) and, per account, what
// happened. Nothing here touches the database. Unknown fields are ignored; unknown message types
// become `unsupported` so nothing a customer sent is dropped silently.

export const META_OBJECTS = ['whatsapp_business_account', 'page', 'instagram'] as const;
export type MetaObject = (typeof META_OBJECTS)[number];

// biome-ignore lint/suspicious/noExplicitAny: Meta's payloads are read field by field, defensively
type Json = any;
export type MetaDelivery = { object: MetaObject; entry: Json[] };

/** Which connected account an entry speaks for. */
export type MetaRoute = { provider: 'whatsapp' | 'facebook' | 'instagram'; externalId: string };

const PROVIDER: Record<MetaObject, MetaRoute['provider']> = {
  whatsapp_business_account: 'whatsapp',
  page: 'facebook',
  instagram: 'instagram',
};
const CHANNEL: Record<MetaObject, MessagingChannel> = {
  whatsapp_business_account: 'whatsapp',
  page: 'messenger',
  instagram: 'instagram',
};

const isObject = (v: unknown): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) =>
  typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null;

/** The minimal shape every Meta delivery has; null when the body is not one. */
export function asMetaDelivery(body: unknown): MetaDelivery | null {
  if (!isObject(body) || !Array.isArray(body.entry)) return null;
  if (!(META_OBJECTS as readonly unknown[]).includes(body.object)) return null;
  return { object: body.object as MetaObject, entry: body.entry };
}

/** The WhatsApp `changes[]` of an entry that carry `value.metadata.phone_number_id`. */
const waChanges = (entry: Json): Json[] =>
  Array.isArray(entry?.changes) ? entry.changes.filter((c: Json) => isObject(c?.value)) : [];

/** Every account the delivery addresses, once each, in order of appearance. */
export function metaRoutes(d: MetaDelivery): MetaRoute[] {
  const ids: string[] = [];
  for (const entry of d.entry) {
    if (d.object === 'whatsapp_business_account') {
      for (const c of waChanges(entry)) {
        const id = str(c.value.metadata?.phone_number_id);
        if (id) ids.push(id);
      }
    } else {
      const id = str(entry?.id);
      if (id) ids.push(id);
    }
  }
  return [...new Set(ids)].map((externalId) => ({ provider: PROVIDER[d.object], externalId }));
}

/** What the delivery says for the account `externalId`, in order. */
export function metaEvents(d: MetaDelivery, externalId: string): InboundEvent[] {
  const channel = CHANNEL[d.object];
  const out: InboundEvent[] = [];
  for (const entry of d.entry) {
    if (d.object === 'whatsapp_business_account') {
      for (const c of waChanges(entry)) {
        if (str(c.value.metadata?.phone_number_id) !== externalId) continue;
        if (c.field !== undefined && c.field !== 'messages') continue; // template and account updates
        out.push(...whatsappValue(c.value));
      }
    } else if (str(entry?.id) === externalId && Array.isArray(entry.messaging)) {
      for (const m of entry.messaging) out.push(...messagingEvent(channel, externalId, m));
    }
  }
  return out;
}

const seconds = (v: unknown) => {
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? new Date(n * 1000) : null;
};
const millis = (v: unknown) => {
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? new Date(n) : null;
};

const MEDIA = ['image', 'video', 'audio', 'document', 'sticker'] as const;

function whatsappValue(value: Json): InboundEvent[] {
  const out: InboundEvent[] = [];
  const names = new Map<string, string>();
  for (const c of Array.isArray(value.contacts) ? value.contacts : []) {
    const id = str(c?.wa_id);
    const name = str(c?.profile?.name);
    if (id && name) names.set(id, name);
  }
  for (const m of Array.isArray(value.messages) ? value.messages : []) {
    const from = str(m?.from);
    const id = str(m?.id);
    if (!from || !id) continue;
    const { type, body, content } = whatsappContent(m);
    out.push({
      kind: 'message',
      channel: 'whatsapp',
      from: { id: from, name: names.get(from) },
      providerMessageId: id,
      type,
      body,
      content: m.context ? { ...(content ?? {}), context: m.context } : content,
      receivedAt: seconds(m.timestamp),
    });
  }
  for (const s of Array.isArray(value.statuses) ? value.statuses : []) {
    const id = str(s?.id);
    if (!id || !['sent', 'delivered', 'read', 'failed'].includes(s.status)) continue;
    const e = Array.isArray(s.errors) ? s.errors[0] : undefined;
    out.push({
      kind: 'status',
      providerMessageId: id,
      status: s.status,
      at: seconds(s.timestamp),
      // Statuses may overtake the send's own answer: an unknown id is waited for (retried).
      awaitUnknown: true,
      ...(s.status === 'failed'
        ? {
            error: {
              code: e?.code ?? null,
              title: e?.title ?? null,
              message: e?.message ?? e?.title ?? null,
              details: e?.error_data?.details ?? null,
            },
          }
        : {}),
    });
  }
  return out;
}

type Content = { type: InboundMessageType; body: string | null; content: Record<string, unknown> | null };

function whatsappContent(m: Json): Content {
  const t = m.type as string;
  if (t === 'text') return { type: 'text', body: str(m.text?.body), content: null };
  if ((MEDIA as readonly string[]).includes(t) && isObject(m[t])) {
    // Graph gives a media id, not a URL: it is kept, and fetched (GET /<media id>) when wanted.
    const { id, caption, ...rest } = m[t];
    return { type: t as Content['type'], body: str(caption), content: { media_id: str(id), ...rest } };
  }
  if (t === 'location' && isObject(m.location)) return { type: 'location', body: null, content: m.location };
  if (t === 'contacts' && Array.isArray(m.contacts))
    return { type: 'contacts', body: null, content: { contacts: m.contacts } };
  if (t === 'interactive' && isObject(m.interactive)) {
    const reply = m.interactive.button_reply ?? m.interactive.list_reply;
    return { type: 'interactive', body: str(reply?.title), content: m.interactive };
  }
  if (t === 'button' && isObject(m.button))
    // A quick-reply button of a template: its text is what the customer tapped.
    return { type: 'interactive', body: str(m.button.text), content: { type: 'button', button: m.button } };
  if (t === 'reaction' && isObject(m.reaction)) return { type: 'reaction', body: null, content: m.reaction };
  return {
    type: 'unsupported',
    body: null,
    content: { type: t ?? null, ...(Array.isArray(m.errors) ? { errors: m.errors } : {}) },
  };
}

const ATTACHMENT_TYPE: Record<string, InboundMessageType> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  file: 'document',
  location: 'location',
};

function messagingEvent(channel: MessagingChannel, pageId: string, m: Json): InboundEvent[] {
  const sender = str(m?.sender?.id);
  if (!sender || sender === pageId) return []; // our own echoes
  if (isObject(m.message)) {
    const msg = m.message;
    const mid = str(msg.mid);
    if (!mid || msg.is_echo) return [];
    const attachments = Array.isArray(msg.attachments) ? msg.attachments : [];
    const first = attachments[0];
    const type: InboundMessageType = str(msg.text)
      ? 'text'
      : first
        ? (ATTACHMENT_TYPE[first.type] ?? 'unsupported')
        : 'unsupported';
    const content: Record<string, unknown> = {};
    if (attachments.length) content.attachments = attachments;
    if (msg.quick_reply) content.quick_reply = msg.quick_reply;
    if (msg.reply_to) content.reply_to = msg.reply_to;
    return [
      {
        kind: 'message',
        channel,
        from: { id: sender },
        providerMessageId: mid,
        type,
        body: str(msg.text),
        content: Object.keys(content).length ? content : null,
        receivedAt: millis(m.timestamp),
      },
    ];
  }
  if (isObject(m.reaction) && m.reaction.action !== 'unreact') {
    const mid = str(m.reaction.mid);
    // A reaction has no id of its own: the reacted message's id and the sender make one.
    if (!mid) return [];
    return [
      {
        kind: 'message',
        channel,
        from: { id: sender },
        providerMessageId: `reaction:${sender}:${mid}:${str(m.timestamp) ?? ''}`,
        type: 'reaction',
        body: null,
        content: { message_id: mid, emoji: m.reaction.emoji ?? null, reaction: m.reaction.reaction ?? null },
        receivedAt: millis(m.timestamp),
      },
    ];
  }
  if (isObject(m.delivery) || isObject(m.read)) {
    const status = isObject(m.read) ? 'read' : 'delivered';
    const ev = m.read ?? m.delivery;
    const out: InboundEvent[] = [];
    // Instagram names the message read; Messenger gives a watermark (everything sent before it).
    // Those ids may name messages sent from Meta's own inbox, never known here: not waited for.
    const mids = [ev.mid, ...(Array.isArray(ev.mids) ? ev.mids : [])].map(str).filter((x) => x !== null);
    for (const mid of mids)
      out.push({
        kind: 'status',
        providerMessageId: mid,
        status,
        at: millis(m.timestamp),
        awaitUnknown: false,
      });
    const watermark = millis(ev.watermark);
    if (watermark) out.push({ kind: 'watermark', channel, contact: sender, status, watermark });
    return out;
  }
  return [];
}

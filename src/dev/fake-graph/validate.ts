// The fake's checks of a send request's body, as Meta documents the fields: each returns null when
// the body is one Meta would accept, or a sentence naming what is wrong (answered as code 100,
// Invalid parameter). Strict on purpose: a body the fake accepts should be one Meta accepts.

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const isHttpUrl = (v: unknown) => nonEmpty(v) && /^https?:\/\//.test(v) && URL.canParse(v);

const WHATSAPP_MEDIA = ['image', 'video', 'audio', 'document', 'sticker'];

/** Cloud API `POST /{phone-number-id}/messages` (text, template, media by link or id). */
export function checkWhatsApp(body: Json): string | null {
  if (body.messaging_product !== 'whatsapp')
    return 'The parameter messaging_product is required and must be "whatsapp".';
  if (body.recipient_type !== undefined && body.recipient_type !== 'individual')
    return 'recipient_type must be "individual".';
  // Meta takes the number with or without its leading +, and nothing but digits otherwise.
  if (!nonEmpty(body.to) || !/^\+?\d{5,15}$/.test(body.to))
    return 'The parameter to is required and must be a phone number.';
  const type = body.type ?? 'text';
  if (type === 'text') {
    const text = body.text;
    if (!isObject(text) || !nonEmpty(text.body)) return 'text.body is required for a text message.';
    if (text.body.length > 4096) return 'text.body is longer than 4096 characters.';
    if (text.preview_url !== undefined && typeof text.preview_url !== 'boolean')
      return 'text.preview_url must be a boolean.';
    return null;
  }
  if (type === 'template') {
    const t = body.template;
    if (!isObject(t) || !nonEmpty(t.name)) return 'template.name is required.';
    if (!isObject(t.language) || !nonEmpty(t.language.code)) return 'template.language.code is required.';
    if (t.components !== undefined && !Array.isArray(t.components))
      return 'template.components must be an array.';
    return null;
  }
  if (typeof type === 'string' && WHATSAPP_MEDIA.includes(type)) {
    const media = body[type];
    if (!isObject(media)) return `${type} object is required for a ${type} message.`;
    if (media.id === undefined && !isHttpUrl(media.link))
      return `${type}.link must be an http(s) URL (or give ${type}.id).`;
    if (media.caption !== undefined && (type === 'audio' || type === 'sticker'))
      return `${type} does not take a caption.`;
    if (media.filename !== undefined && type !== 'document') return 'Only a document takes a filename.';
    return null;
  }
  return `type "${String(type)}" is not supported.`;
}

const MESSAGING_TYPES = ['RESPONSE', 'UPDATE', 'MESSAGE_TAG'];
const TAGS = [
  'HUMAN_AGENT',
  'ACCOUNT_UPDATE',
  'CONFIRMED_EVENT_UPDATE',
  'POST_PURCHASE_UPDATE',
  'CUSTOMER_FEEDBACK',
];

/**
 * Messenger Send API `POST /{page-id}/messages` and Instagram's `POST /{ig-user-id}/messages`.
 * Messenger requires `messaging_type`; Instagram's documented body omits it unless tagged.
 */
export function checkMessaging(body: Json, channel: 'messenger' | 'instagram'): string | null {
  if (!isObject(body.recipient) || !nonEmpty(body.recipient.id))
    return 'param recipient.id must be non-empty.';
  const mt = body.messaging_type;
  if (mt === undefined) {
    if (channel === 'messenger') return 'param messaging_type is required.';
  } else if (typeof mt !== 'string' || !MESSAGING_TYPES.includes(mt)) {
    return `param messaging_type must be one of ${MESSAGING_TYPES.join(', ')}.`;
  }
  if (mt === 'MESSAGE_TAG') {
    if (typeof body.tag !== 'string' || !TAGS.includes(body.tag))
      return 'param tag must be a valid message tag.';
    if (channel === 'instagram' && body.tag !== 'HUMAN_AGENT')
      return 'Instagram takes only the HUMAN_AGENT tag.';
  } else if (body.tag !== undefined) {
    return 'param tag requires messaging_type MESSAGE_TAG.';
  }
  const m = body.message;
  if (!isObject(m)) return 'param message must be non-empty.';
  if (m.text !== undefined && m.attachment !== undefined)
    return 'Must send either text or attachment, not both.';
  if (m.text !== undefined) {
    if (!nonEmpty(m.text)) return 'param message.text must be non-empty.';
    // Instagram counts UTF-8 bytes, Messenger characters.
    if (channel === 'instagram' && Buffer.byteLength(m.text) > 1000)
      return 'Message text must be 1000 bytes or less.';
    if (channel === 'messenger' && m.text.length > 2000)
      return 'Message text must be 2000 characters or less.';
    return null;
  }
  const a = m.attachment;
  if (!isObject(a)) return 'Must send either text or attachment.';
  const types = channel === 'instagram' ? ['image', 'video', 'audio'] : ['image', 'video', 'audio', 'file'];
  if (typeof a.type !== 'string' || !types.includes(a.type))
    return `param message.attachment.type must be one of ${types.join(', ')}.`;
  if (!isObject(a.payload)) return 'param message.attachment.payload is required.';
  if (a.payload.attachment_id === undefined && !isHttpUrl(a.payload.url))
    return 'param message.attachment.payload.url must be an http(s) URL.';
  return null;
}

// What we send, in our words, and the exact JSON bodies Meta documents for it (pure functions, no
// I/O). WhatsApp: Cloud API `POST /{phone-number-id}/messages`. Messenger: Send API
// `POST /{page-id}/messages`. Instagram: Instagram API with Instagram Login
// `POST /{ig-user-id}/messages` on graph.instagram.com. Formats and sources: docs/graph-api.md.

export type TextContent = {
  type: 'text';
  text: string /** WhatsApp only: render a link preview. */;
  previewUrl?: boolean;
};

export type MediaType = 'image' | 'video' | 'audio' | 'document';
/** Media by public link: Meta downloads it from `url`, so it must be reachable from the internet. */
export type MediaContent = { type: MediaType; url: string; caption?: string; filename?: string };

/** An approved WhatsApp template. `language` is a locale code ("en_US") or Meta's `{code}`. */
export type TemplateContent = {
  type: 'template';
  template: { name: string; language: string | { code: string }; components?: unknown[] };
};

export type WhatsAppContent = TextContent | TemplateContent | MediaContent;
/** Messenger has no captions; a document goes as a `file` attachment. */
export type MessengerContent = TextContent | { type: MediaType; url: string };
/** Instagram DMs carry text, image, video and audio (no files, no captions). */
export type InstagramContent = TextContent | { type: 'image' | 'video' | 'audio'; url: string };

export type MessagingOptions = {
  /**
   * A person's reply after the 24-hour window (up to 7 days after the customer's last message):
   * Meta's `MESSAGE_TAG` with tag `HUMAN_AGENT`. Otherwise the message is a `RESPONSE`.
   */
  humanAgent?: boolean;
};

export function whatsAppBody(to: string, content: WhatsAppContent): Record<string, unknown> {
  const head = { messaging_product: 'whatsapp', recipient_type: 'individual', to };
  switch (content.type) {
    case 'text':
      return {
        ...head,
        type: 'text',
        text: { preview_url: content.previewUrl ?? false, body: content.text },
      };
    case 'template': {
      const { name, language, components } = content.template;
      const code = typeof language === 'string' ? language : language.code;
      return {
        ...head,
        type: 'template',
        template: { name, language: { code }, ...(components?.length ? { components } : {}) },
      };
    }
    default: {
      // Audio takes no caption and only documents take a filename (Cloud API media objects).
      const media: Record<string, unknown> = { link: content.url };
      if (content.caption !== undefined && content.type !== 'audio') media.caption = content.caption;
      if (content.filename !== undefined && content.type === 'document') media.filename = content.filename;
      return { ...head, type: content.type, [content.type]: media };
    }
  }
}

function messageOf(content: MessengerContent | InstagramContent): Record<string, unknown> {
  if (content.type === 'text') return { text: content.text };
  const type = content.type === 'document' ? 'file' : content.type;
  return { attachment: { type, payload: { url: content.url } } };
}

/** Messenger requires `messaging_type` on every send. */
export function messengerBody(
  psid: string,
  content: MessengerContent,
  options: MessagingOptions = {},
): Record<string, unknown> {
  return {
    recipient: { id: psid },
    ...(options.humanAgent
      ? { messaging_type: 'MESSAGE_TAG', tag: 'HUMAN_AGENT' }
      : { messaging_type: 'RESPONSE' }),
    message: messageOf(content),
  };
}

/**
 * Instagram's documented body is `recipient` and `message` alone; `messaging_type` appears only
 * with the HUMAN_AGENT tag.
 */
export function instagramBody(
  igsid: string,
  content: InstagramContent,
  options: MessagingOptions = {},
): Record<string, unknown> {
  return {
    recipient: { id: igsid },
    ...(options.humanAgent ? { messaging_type: 'MESSAGE_TAG', tag: 'HUMAN_AGENT' } : {}),
    message: messageOf(content),
  };
}

// What a customer's platform tells us, whatever the provider, as plain values: a message they
// sent, a status of one we sent, or a watermark (every message we sent before it was delivered or
// read). src/channels/meta-webhook.ts maps Meta's payloads to these; src/domain/inbound-messages.ts
// applies them.

/** The channels a conversation runs over (a contact found from one names it as its source). */
export type MessagingChannel = 'whatsapp' | 'messenger' | 'instagram';

export type InboundMessageType =
  | 'text'
  | 'image'
  | 'video'
  | 'audio'
  | 'document'
  | 'sticker'
  | 'location'
  | 'contacts'
  | 'interactive'
  | 'reaction'
  | 'unsupported';

export type DeliveryStatus = 'sent' | 'delivered' | 'read' | 'failed';

export type InboundEvent =
  | {
      kind: 'message';
      channel: MessagingChannel;
      from: { id: string; name?: string | undefined };
      providerMessageId: string;
      type: InboundMessageType;
      body: string | null;
      content: Record<string, unknown> | null;
      /** The provider's timestamp; null: now. */
      receivedAt: Date | null;
    }
  | {
      kind: 'status';
      providerMessageId: string;
      status: DeliveryStatus;
      at: Date | null;
      error?: Record<string, unknown>;
      /** True: an id not known yet may be the send's answer still on its way (wait and retry). */
      awaitUnknown: boolean;
    }
  | {
      kind: 'watermark';
      channel: MessagingChannel;
      /** The customer's platform id (PSID, Instagram-scoped id). */
      contact: string;
      status: 'delivered' | 'read';
      watermark: Date;
    };

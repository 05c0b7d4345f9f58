import { z } from 'zod';

/**
 * Sentences for people: what the owner filling a form, or the model reading a refusal, is told
 * when a value is refused. Written once, here, and used by every way in: `/rest/v1`'s `message`
 * (src/rest/db-errors.ts), the shared database-error mapper behind the functions and MCP
 * (errors.ts), zod's messages everywhere (the error map set below), and so the dashboard, which
 * shows the service's `message`. Machines keep `code`, `details.constraint` and `details.column`;
 * these sentences may change wording, those may not.
 *
 * Keyed by a constraint's name (migrations/) and by a field's name (a column, or an input of a
 * function or tool). test/platform/messages.test.ts fails when a constraint a person can trip has
 * no sentence here.
 */

/** What a person calls each field, where its column name would not do. */
const LABELS: Record<string, string> = {
  phone: 'phone number',
  phone_number: 'delivery phone number',
  shipping_phone_number: 'delivery phone number',
  customer_phone: 'customer’s phone number',
  address: 'delivery address',
  shipping_address: 'delivery address',
  email: 'email address',
  customer_email: 'customer’s email address',
  customer_name: 'customer’s name',
  first_name: 'first name',
  last_name: 'last name',
  job_title: 'job title',
  sku: 'SKU',
  unit_price: 'price',
  quantity_on_hand: 'quantity in stock',
  quantity_reserved: 'reserved quantity',
  reorder_point: 'reorder point',
  expires_at: 'expiry',
  items: 'order lines',
  contact_id: 'contact',
  item_id: 'item',
  order_id: 'order',
  warehouse_id: 'warehouse',
  scheduled_at: 'scheduled time',
  external_id: 'external id',
  tax_total: 'tax',
  shipping_total: 'shipping cost',
  discount_total: 'discount',
  organization_name: 'organization name',
  country: 'country',
};

/** The field a path ends with (`items.0.quantity` → quantity), as a person names it. */
export function fieldLabel(path: string | readonly PropertyKey[]): string {
  const parts = (typeof path === 'string' ? path.split('.') : path.map(String)).filter(
    (p) => !/^\d+$/.test(p),
  );
  const field = parts.at(-1) ?? '';
  return LABELS[field] ?? (field.replace(/_/g, ' ') || 'value');
}

type Sentence = { column: string; message: string };

const atMost = (column: string, n: number, label = fieldLabel(column)): Sentence => ({
  column,
  message: `The ${label} can be at most ${n.toLocaleString('en-US')} characters`,
});
const notNegative = (column: string, label = fieldLabel(column)): Sentence => ({
  column,
  message: `The ${label} cannot be negative`,
});
const filledUpTo = (column: string, n: number, label = fieldLabel(column)): Sentence => ({
  column,
  message: `Enter the ${label} (at most ${n} characters)`,
});
const oneOf = (column: string, values: string[], label = fieldLabel(column)): Sentence => ({
  column,
  message: `The ${label} must be one of: ${values.join(', ')}`,
});
const PHONE = 'Enter the phone number with its country code, e.g. +1 415 555 0102';
const CURRENCY = 'Use a three-letter currency code, e.g. USD or EUR';
const EMAIL = 'Enter an email address like name@example.com';

/** CHECK constraints, by name: the sentence, and the column it is about (empty for a row rule). */
const CHECKS: Record<string, Sentence> = {
  organizations_name_check: filledUpTo('name', 200, 'organization’s name'),
  organizations_owner_email_check: atMost('owner_email', 320, 'email address'),
  organizations_country_check: {
    column: 'country',
    message: 'Choose a country by its two-letter code, e.g. US or GB',
  },
  organization_members_role_check: oneOf('role', ['owner', 'admin', 'member']),
  agent_api_keys_agent_platform_check: atMost('agent_platform', 64, 'agent platform'),
  agent_api_keys_key_prefix_check: {
    column: 'key_prefix',
    message: 'The key prefix is not one the service issued',
  },
  agent_api_keys_lifetime: { column: 'expires_at', message: 'A key can last at most 366 days' },
  // A connected app's grant (migrations/0054): written by the sign-in from the client's own details.
  agent_api_keys_oauth_client_id_check: filledUpTo('oauth_client_id', 2048, 'app’s client id'),
  agent_api_keys_oauth_client_name_check: filledUpTo('oauth_client_name', 200, 'app’s name'),
  agent_api_keys_key_or_grant: {
    column: 'oauth_client_id',
    message: 'A row is either an API key or a connected app’s grant, not both',
  },
  agent_api_keys_name_check: filledUpTo('name', 100, 'key’s name'),
  agent_api_keys_scopes_check: {
    column: 'scopes',
    message: 'Give the key at least one scope: read, write or admin',
  },
  contacts_address_check: { column: 'address', message: 'The address must be an object of named parts' },
  contacts_company_check: atMost('company', 200),
  contacts_email_check: { column: 'email', message: EMAIL },
  contacts_external_id_check: atMost('external_id', 200),
  contacts_first_name_check: atMost('first_name', 200),
  contacts_job_title_check: atMost('job_title', 200),
  contacts_last_name_check: atMost('last_name', 200),
  contacts_notes_check: atMost('notes', 10000),
  contacts_phone_check: { column: 'phone', message: PHONE },
  contacts_source_check: filledUpTo('source', 50),
  contacts_tags_check: { column: 'tags', message: 'Use at most 50 tags, each at most 50 characters' },
  warehouses_address_check: { column: 'address', message: 'The address must be an object of named parts' },
  warehouses_name_check: filledUpTo('name', 200, 'warehouse’s name'),
  inventory_items_currency_check: { column: 'currency', message: CURRENCY },
  inventory_items_description_check: atMost('description', 10000),
  inventory_items_name_check: filledUpTo('name', 300, 'item’s name'),
  inventory_items_quantity_reserved_check: notNegative('quantity_reserved'),
  inventory_items_reorder_point_check: notNegative('reorder_point'),
  inventory_items_sku_check: {
    column: 'sku',
    message: 'The SKU cannot be blank; leave it empty or use at most 100 characters',
  },
  inventory_items_status_check: oneOf('status', ['active', 'draft', 'archived']),
  inventory_items_unit_price_check: notNegative('unit_price'),
  orders_currency_check: { column: 'currency', message: CURRENCY },
  orders_customer_email_check: atMost('customer_email', 320),
  orders_customer_name_check: atMost('customer_name', 300),
  orders_customer_phone_check: atMost('customer_phone', 40),
  orders_discount_total_check: notNegative('discount_total'),
  orders_external_id_check: atMost('external_id', 200),
  orders_external_name_check: atMost('external_name', 100, 'external name'),
  orders_notes_check: atMost('notes', 10000),
  orders_shipping_address_check: atMost('shipping_address', 2000),
  orders_shipping_phone_number_check: atMost('shipping_phone_number', 40),
  orders_shipping_total_check: notNegative('shipping_total'),
  orders_tax_total_check: notNegative('tax_total'),
  orders_source_check: filledUpTo('source', 50),
  orders_status_check: oneOf('status', [
    'pending',
    'confirmed',
    'processing',
    'shipped',
    'delivered',
    'cancelled',
    'returned',
  ]),
  orders_fulfillment_check: oneOf('fulfillment', ['delivery', 'pickup'], 'fulfillment'),
  order_items_line_number_check: { column: 'line_number', message: 'Line numbers start at 1' },
  order_items_name_check: filledUpTo('name', 300, 'line’s name'),
  order_items_quantity_check: { column: 'quantity', message: 'The quantity must be between 1 and 1,000,000' },
  order_items_sku_check: atMost('sku', 100),
  order_items_unit_price_check: notNegative('unit_price'),
  order_status_events_note_check: atMost('note', 2000),
  organization_invitations_email_check: { column: 'email', message: EMAIL },
  organization_invitations_role_check: oneOf('role', ['owner', 'admin', 'member']),
  conversations_channel_check: oneOf('channel', ['whatsapp', 'messenger', 'instagram']),
  conversations_status_check: oneOf('status', ['open', 'pending', 'resolved', 'snoozed']),
  conversations_unread_count_check: notNegative('unread_count', 'unread count'),
  messages_body_check: atMost('body', 10000, 'message'),
  messages_check: { column: '', message: 'Only a received message has the status received' },
  messages_check1: { column: '', message: 'A message is sent by a person or by an agent, not both' },
  messages_content_check: { column: 'content', message: 'The content must be an object or a list' },
  messages_direction_check: oneOf('direction', ['in', 'out']),
  messages_error_check: { column: 'error', message: 'The error must be an object' },
  messages_idempotency_key_check: filledUpTo('idempotency_key', 255, 'idempotency key'),
  messages_media_url_check: atMost('media_url', 2048, 'media address'),
  messages_provider_message_id_check: atMost('provider_message_id', 255, 'provider’s message id'),
  messages_status_check: oneOf('status', ['queued', 'sent', 'delivered', 'read', 'failed', 'received']),
  messages_template_check: { column: 'template', message: 'The template must be an object' },
  messages_type_check: {
    column: 'type',
    message: 'The message type must be one the channels know, e.g. text, image or template',
  },
  social_posts_check: { column: 'scheduled_at', message: 'A scheduled post needs a time to publish' },
  social_posts_check1: {
    column: 'scheduled_at',
    message: 'A draft has no publishing time; schedule it instead',
  },
  social_posts_created_by_check: atMost('created_by', 100, 'author'),
  social_posts_link_check: atMost('link', 2048),
  social_posts_link_web: { column: 'link', message: 'The link must be a web address starting with https://' },
  social_posts_message_check: atMost('message', 63206, 'post’s text'),
  social_posts_permalink_check: atMost('permalink', 2048),
  social_posts_platform_check: oneOf('platform', ['facebook', 'instagram', 'twitter', 'linkedin']),
  social_posts_provider_post_id_check: atMost('provider_post_id', 200, 'provider’s post id'),
  social_posts_status_check: oneOf('status', ['draft', 'scheduled', 'publishing', 'published', 'failed']),
  social_post_media_bytes_check: { column: 'bytes', message: 'The file is empty' },
  social_post_media_height_check: { column: 'height', message: 'The image height must be more than 0' },
  social_post_media_mime_type_check: atMost('mime_type', 100, 'file type'),
  social_post_media_position_check: { column: 'position', message: 'A post has at most 10 media files' },
  social_post_media_source_url_check: atMost('source_url', 2048, 'media address'),
  social_post_media_storage_path_check: filledUpTo('storage_path', 1024, 'file path'),
  social_post_media_width_check: { column: 'width', message: 'The image width must be more than 0' },
  social_post_metrics_metric_check: filledUpTo('metric', 200),
};

/** Unique keys, by name: the field a person chose (never `organization_id`) and what to do. */
const UNIQUES: Record<string, Sentence> = {
  contacts_email_key: { column: 'email', message: 'Another contact already has this email address' },
  contacts_external_key: { column: 'external_id', message: 'Another contact already has this external id' },
  contacts_whatsapp_key: {
    column: 'whatsapp_id',
    message: 'Another contact already has this WhatsApp number',
  },
  contacts_facebook_key: {
    column: 'facebook_psid',
    message: 'Another contact already has this Messenger id',
  },
  contacts_instagram_key: {
    column: 'instagram_id',
    message: 'Another contact already has this Instagram id',
  },
  warehouses_one_default: {
    column: 'is_default',
    message: 'The organization already has a default warehouse',
  },
  warehouses_name_key: { column: 'name', message: 'Another warehouse already has this name' },
  inventory_items_sku_key: {
    column: 'sku',
    message: 'Another item already has this SKU; use another SKU or change that item',
  },
  orders_number_key: { column: 'order_number', message: 'Another order already has this number' },
  orders_external_key: { column: 'external_id', message: 'This order was already imported' },
  organization_invitations_organization_id_email_key: {
    column: 'email',
    message: 'This email address was already invited',
  },
  agent_api_keys_key_prefix_key: { column: 'key_prefix', message: 'Another key already has this prefix' },
  conversations_account_contact_key: {
    column: 'contact_id',
    message: 'This contact already has a conversation on that account',
  },
  messages_provider_key: { column: 'provider_message_id', message: 'This message was already recorded' },
  messages_idempotency_key: {
    column: 'idempotency_key',
    message: 'A message with this idempotency key was already sent',
  },
  social_post_media_organization_id_post_id_position_key: {
    column: 'position',
    message: 'The post already has a file in this position',
  },
};

/** The sentence for a broken CHECK constraint, if a person can break it. */
export const checkSentence = (constraint: string | undefined): Sentence | undefined =>
  constraint ? CHECKS[constraint] : undefined;

/** The sentence for a taken unique key. */
export const uniqueSentence = (constraint: string | undefined): Sentence | undefined =>
  constraint ? UNIQUES[constraint] : undefined;

/** Every constraint with a sentence (for the test that every constraint has one). */
export const constraintsWithSentences = () => new Set([...Object.keys(CHECKS), ...Object.keys(UNIQUES)]);

/** The sentence for a required column left empty (a NOT NULL). */
export const requiredSentence = (column: string) => `Enter the ${fieldLabel(column)}`;

/** Formats the service uses for text inputs, as a person would be asked for them. */
const FORMATS: Record<string, (label: string) => string> = {
  email: () => EMAIL,
  guid: (l) => `The ${l} is not a valid id; pick it from the list or send its UUID`,
  uuid: (l) => `The ${l} is not a valid id; pick it from the list or send its UUID`,
  datetime: (l) => `Enter the ${l} as a date and time, e.g. 2026-05-01T12:00:00Z`,
  date: (l) => `Enter the ${l} as a date, e.g. 2026-05-01`,
  url: (l) => `The ${l} must be a web address, e.g. https://example.com`,
};

/** Field-specific sentences for an input's format, where the generic one would be vague. */
const FIELD_FORMATS: Record<string, string> = { currency: CURRENCY };

const TYPE_WORDS: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
};

const count = (n: unknown) =>
  typeof n === 'number' || typeof n === 'bigint' ? Number(n).toLocaleString('en-US') : String(n);

/**
 * zod's issue as a sentence for people, or undefined to keep zod's own. A schema's own message
 * (`.refine(…, 'message')`) always wins over this; this replaces zod's defaults ("Too small:
 * expected string to have >=1 characters").
 */
export function issueSentence(iss: z.core.$ZodRawIssue): string | undefined {
  const label = fieldLabel((iss.path ?? []) as PropertyKey[]);
  const field = String(iss.path?.at(-1) ?? '');
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined || iss.input === null) return `Enter the ${label}`;
      return `The ${label} must be ${TYPE_WORDS[iss.expected] ?? iss.expected}`;
    case 'too_small':
      if (iss.origin === 'string') {
        return Number(iss.minimum) <= 1
          ? `Enter the ${label}`
          : `The ${label} needs at least ${count(iss.minimum)} characters`;
      }
      if (iss.origin === 'array' || iss.origin === 'set')
        return `Give at least ${count(iss.minimum)} ${Number(iss.minimum) === 1 ? label.replace(/s$/, '') : label}`;
      return iss.inclusive
        ? Number(iss.minimum) === 0
          ? `The ${label} cannot be negative`
          : `The ${label} must be ${count(iss.minimum)} or more`
        : `The ${label} must be more than ${count(iss.minimum)}`;
    case 'too_big':
      if (iss.origin === 'string') return `The ${label} can be at most ${count(iss.maximum)} characters`;
      if (iss.origin === 'array' || iss.origin === 'set')
        return `Give at most ${count(iss.maximum)} ${label}`;
      return iss.inclusive
        ? `The ${label} can be at most ${count(iss.maximum)}`
        : `The ${label} must be less than ${count(iss.maximum)}`;
    case 'invalid_format':
      return (
        FIELD_FORMATS[field] ?? FORMATS[iss.format]?.(label) ?? `The ${label} is not in the expected form`
      );
    case 'invalid_value':
      return `Choose the ${label} from: ${iss.values.map(String).join(', ')}`;
    case 'not_multiple_of':
      return Number(iss.divisor) === 0.01
        ? `The ${label} can have at most two decimals`
        : `The ${label} must be a multiple of ${count(iss.divisor)}`;
    default:
      return undefined;
  }
}

// zod's messages, everywhere in the process, are these sentences unless a schema says its own
// (a schema's message takes precedence over this global map).
z.config({ customError: issueSentence });

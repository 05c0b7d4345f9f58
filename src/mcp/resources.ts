import type { Resource } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ORDER_STATUSES, ORDER_TRANSITIONS, STOCK_EFFECTS } from '../domain/order-lifecycle.ts';
import { organizationInfo } from '../domain/organization-info.ts';
import { Contact, INVENTORY_STATUSES, InventoryItem, OrderItem, OrderWithItems } from '../domain/records.ts';
import {
  EDITABLE_POST_STATUSES,
  MAX_SCHEDULE_AHEAD_DAYS,
  MEDIA_CONSTRAINTS,
  POST_STATUSES,
  POST_TRANSITIONS,
  SOCIAL_MINIMUM_PLAN,
  SOCIAL_PLATFORMS,
  SocialPost,
  WRITABLE_PLATFORMS,
} from '../domain/social.ts';
import { domainDeps } from '../services.ts';
import type { Tool, ToolContext } from './tool.ts';
import { createContactTool } from './tools/contacts.ts';
import { TOOLS } from './tools/index.ts';
import { createOrderTool } from './tools/orders.ts';

const schema = (s: z.ZodType, io: 'input' | 'output' = 'output') => z.toJSONSchema(s, { io });

/** What each tool about these records returns: tools/list leaves result shapes to these resources. */
const results = (records: Tool['records']) =>
  Object.fromEntries(TOOLS.filter((t) => t.records === records).map((t) => [t.name, schema(t.output)]));

// The schema documents are the same for every caller: built once, from the tools' own definitions.
const SCHEMAS: Record<string, unknown> = {
  'svc://schema/contacts': {
    record: schema(Contact),
    create_input: schema(createContactTool.input, 'input'),
    results: results('contacts'),
    rules: [
      'email is stored lower-cased and is unique within the organization',
      'phone is E.164 (+ and country code); input may contain spaces, dashes and brackets',
      'at most 50 tags',
    ],
  },
  'svc://schema/orders': {
    record: schema(OrderWithItems),
    line_item: schema(OrderItem),
    create_input: schema(createOrderTool.input, 'input'),
    results: results('orders'),
    statuses: ORDER_STATUSES,
    initial_status: 'pending',
    lifecycle: ORDER_TRANSITIONS,
    terminal_statuses: ORDER_STATUSES.filter((s) => ORDER_TRANSITIONS[s].length === 0),
    stock_effects: STOCK_EFFECTS,
    numbering: 'ORD- followed by a six-digit sequence per organization (ORD-000001, ORD-000002, …)',
    rules: [
      'totals are computed from the lines: line total = quantity × unit_price; total = subtotal − discount_total + shipping_total + tax_total (tax_total only when not taxes_included)',
      'orders imported from Shopify have source shopify, external_id the Shopify id and external_name its #number',
      'lines can change only while the order is pending (error order_locked)',
      'a line without item_id is linked by product name (case-insensitive), then SKU, else to a new draft item with auto_created',
    ],
  },
  'svc://schema/inventory': {
    record: schema(InventoryItem),
    results: results('inventory'),
    statuses: INVENTORY_STATUSES,
    available: 'quantity_on_hand − quantity_reserved; negative means backordered',
    low_stock: 'available ≤ reorder_point',
    rules: ['sku is unique within the organization', 'draft items with auto_created came from order lines'],
  },
  'svc://schema/social': {
    record: schema(SocialPost),
    platforms: SOCIAL_PLATFORMS,
    writable_platforms: WRITABLE_PLATFORMS,
    statuses: POST_STATUSES,
    lifecycle: POST_TRANSITIONS,
    editable_statuses: EDITABLE_POST_STATUSES,
    cancel: 'cancelling a scheduled post moves it back to draft and clears scheduled_at',
    scheduling: { must_be_future: true, max_days_ahead: MAX_SCHEDULE_AHEAD_DAYS },
    minimum_plan: SOCIAL_MINIMUM_PLAN,
    media: MEDIA_CONSTRAINTS,
    rules: [
      `every social tool needs the ${SOCIAL_MINIMUM_PLAN} plan or higher: on free the answer is plan_required with minimum_plan`,
      'create, update and delete also need the write scope',
      'without a connected Facebook Page or Instagram account the answer is social_not_configured (details.reason no_connected_account; module_unavailable when the service lacks the social tables)',
      'account_id may be left out when exactly one account of the platform is connected (svc_list_social_accounts)',
      'media_urls are downloaded by the service and checked by their content; one refused URL refuses the whole write',
      'only draft and scheduled posts can be edited or deleted; anything else is invalid_transition with details.allowed',
    ],
  },
};

export const RESOURCES: Resource[] = [
  {
    uri: 'svc://organization/info',
    name: 'organization-info',
    title: 'Organization and access',
    description:
      'The organization, its plan with limits and current usage, how long data is kept, and this agent’s key, scopes and token expiry',
    mimeType: 'application/json',
  },
  ...(['contacts', 'orders', 'inventory', 'social'] as const).map((name) => ({
    uri: `svc://schema/${name}`,
    name: `schema-${name}`,
    title: `${name[0]?.toUpperCase()}${name.slice(1)} schema`,
    description: {
      contacts:
        'JSON Schema of a contact, of what each contact tool returns, and the rules its fields follow',
      orders:
        'JSON Schema of an order and its lines, of what each order tool returns, the lifecycle and its stock effects',
      inventory:
        'JSON Schema of an inventory item, of what each inventory tool returns, and how availability is computed',
      social: 'Social platforms, the post lifecycle and media constraints',
    }[name],
    mimeType: 'application/json',
  })),
];

/** The resource's JSON, or undefined for a URI this server does not have. */
export async function readResource(uri: string, ctx: ToolContext): Promise<unknown | undefined> {
  if (uri === 'svc://organization/info') {
    return organizationInfo(domainDeps(ctx.s), ctx.principal);
  }
  return SCHEMAS[uri];
}

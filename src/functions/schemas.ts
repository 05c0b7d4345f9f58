import { z } from '@hono/zod-openapi';

const Role = z.enum(['owner', 'admin', 'member']);

export const OrganizationSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    plan: z.string(),
    country: z
      .string()
      .nullable()
      .openapi({ description: 'ISO 3166-1 alpha-2; national phone numbers are read as this country’s' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Organization');

export const MemberSchema = z
  .object({
    user_id: z.uuid(),
    email: z.string(),
    role: Role,
    created_at: z.string(),
  })
  .openapi('Member');

export const InvitationSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    email: z.string(),
    role: Role,
    invited_by: z.uuid().nullable(),
    expires_at: z.string(),
    created_at: z.string(),
    status: z.enum(['pending', 'expired']),
  })
  .openapi('Invitation');

/** An invitation as its addressee sees it. */
export const MyInvitationSchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    organization_name: z.string(),
    role: Role,
    invited_by_email: z.string().nullable(),
    expires_at: z.string(),
    created_at: z.string(),
  })
  .openapi('InvitationToMe');

/** Dates leave as ISO 8601 strings with milliseconds. */
export const iso = (d: Date | string) => (d instanceof Date ? d : new Date(d)).toISOString();

/** An invitation (to the organization, or to the caller) with its dates as ISO 8601. */
export const invitationJson = <T extends { expires_at: Date; created_at: Date }>(i: T) => ({
  ...i,
  expires_at: iso(i.expires_at),
  created_at: iso(i.created_at),
});

export const orgJson = <T extends { created_at: Date; updated_at: Date }>(o: T) => ({
  ...o,
  created_at: iso(o.created_at),
  updated_at: iso(o.updated_at),
});

export const PlanLimitsSchema = z
  .object({
    contacts: z.number().int().nullable(),
    orders: z.number().int().nullable(),
    inventory_items: z.number().int().nullable(),
    outbound_messages: z.number().int().nullable(),
    api_calls_per_day: z.number().int().nullable(),
    warehouses: z.number().int().nullable(),
    ai_annotations: z.number().int().nullable(),
    agents: z.number().int().nullable(),
    mcp_scopes: z.array(z.string()),
    data_retention_days: z.number().int(),
  })
  .openapi('PlanLimits');

/** Beside a key's asked scopes: what its organization's plan lets it use today. */
export const EffectiveScopes = {
  effective_scopes: z.array(z.enum(['read', 'write', 'admin'])).openapi({
    description:
      'What an agent-auth exchange grants today: the key’s scopes (admin ⊃ write ⊃ read) capped by the plan’s mcp_scopes',
  }),
  warning: z.string().nullable().openapi({
    description: 'Which asked scopes the plan withholds and which plan brings them; null when none',
  }),
};

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    name: z.string(),
    key_prefix: z
      .string()
      .nullable()
      .openapi({ description: 'The key’s first characters; null for a connected app (an OAuth grant)' }),
    oauth_client_id: z
      .string()
      .nullable()
      .openapi({ description: 'A connected app’s OAuth client (docs/mcp-oauth.md); null for a key' }),
    scopes: z
      .array(z.enum(['read', 'write', 'admin']))
      .openapi({ description: 'The scopes the key asks for' }),
    ...EffectiveScopes,
    agent_platform: z.string().nullable(),
    expires_at: z.string(),
    is_active: z.boolean(),
    last_used_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('AgentApiKey');

export const keyJson = <K extends { expires_at: Date; last_used_at: Date | null; created_at: Date }>(
  k: K,
) => ({
  ...k,
  expires_at: iso(k.expires_at),
  last_used_at: k.last_used_at ? iso(k.last_used_at) : null,
  created_at: iso(k.created_at),
});

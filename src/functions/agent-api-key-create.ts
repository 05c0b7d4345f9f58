import { createRoute, z } from '@hono/zod-openapi';
import { createApiKey, keyExpiry, requireKeyManager, SCOPES, scopesUnderPlan } from '../domain/agent-keys.ts';
import { explainAgentCeiling } from '../domain/billing-agents.ts';
import { requireUser } from '../platform/http/authenticate.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { EffectiveScopes } from './schemas.ts';

const route = createRoute({
  method: 'post',
  path: '/agent-api-key-create',
  summary: 'Create an agent API key for the current organization (owners and admins)',
  description:
    'The raw key is returned once. Scopes are capped by the plan at every exchange: effective_scopes says what the plan grants today, and warning (null when nothing is withheld) which plan brings the rest. Counts against the plan’s agents ceiling.',
  request: jsonBody(
    z.object({
      name: z.string().trim().min(1).max(100),
      scopes: z
        .array(z.enum(SCOPES))
        .min(1)
        .refine((s) => new Set(s).size === s.length, 'must not repeat a scope'),
      expires_at: z.iso
        .datetime({ offset: true })
        .optional()
        .openapi({ description: 'ISO 8601, in the future, at most 365 days away; default 90 days' }),
    }),
  ),
  responses: {
    201: jsonResponse(
      z.object({
        api_key: z.string(),
        key_prefix: z.string(),
        organization_id: z.uuid(),
        name: z.string(),
        scopes: z.array(z.enum(SCOPES)),
        ...EffectiveScopes,
        expires_at: z.string(),
        message: z.string(),
      }),
      'Created',
    ),
    ...errorResponses(400, 401, 403),
  },
});

export function agentApiKeyCreate(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const principal = requireUser(c.get('principal'));
    const body = c.req.valid('json');
    const expiresAt = keyExpiry(body.expires_at);
    const organizationId = await requireKeyManager(s, principal);
    const { apiKey, row } = await createApiKey(
      (secret) => s.passwords.hash(secret),
      // Row-level security is the guard: only owners and admins may insert keys.
      (insertKey) => s.db.asPrincipal(principal, (tx) => insertKey(tx, organizationId)),
      { name: body.name, scopes: body.scopes, expiresAt, createdBy: principal.userId },
    ).catch(async (err) => {
      // Over the agents ceiling: the refusal says what one more agent costs (docs/billing.md).
      throw await explainAgentCeiling(s.db, err, s.config.billing !== null);
    });
    const underPlan = await scopesUnderPlan(s, row.organization_id);
    return c.json(
      {
        api_key: apiKey,
        key_prefix: row.key_prefix as string, // a new key always has one
        organization_id: row.organization_id,
        name: row.name,
        scopes: row.scopes,
        ...underPlan(row.scopes),
        expires_at: row.expires_at.toISOString(),
        message:
          'Store this API key now: it cannot be shown again. Agents exchange it at agent-auth for a JWT.',
      },
      201,
    );
  });
}

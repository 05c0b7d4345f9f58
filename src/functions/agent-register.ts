import { createRoute, z } from '@hono/zod-openapi';
import { registerAgent } from '../domain/agent-keys.ts';
import { invalidField } from '../platform/errors.ts';
import { addressKey } from '../platform/http/client-ip.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import { hitEach } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';
import { PlanLimitsSchema } from './schemas.ts';

const route = createRoute({
  method: 'post',
  path: '/agent-register',
  summary: 'Self-registration for an AI agent: a new free organization it owns, and its API key',
  description:
    'No bearer token. The key is shown once: store it. Exchange it at agent-auth for a JWT. Paid plans need a person to upgrade.',
  request: jsonBody(
    z.object({
      agent_name: z.string().trim().min(1).max(100),
      agent_platform: z.string().trim().max(64).optional(),
      owner_email: z.string().trim().toLowerCase().pipe(z.email()),
      organization_name: z.string().trim().min(1).max(200),
      plan: z.string().default('free'),
    }),
  ),
  responses: {
    201: jsonResponse(
      z.object({
        success: z.literal(true),
        organization_id: z.uuid(),
        api_key: z.string(),
        api_key_expires_at: z.string(),
        mcp_endpoint: z.string(),
        auth_endpoint: z.string(),
        plan: z.literal('free'),
        plan_limits: PlanLimitsSchema,
        message: z.string(),
      }),
      'Registered',
    ),
    ...errorResponses(400, 429),
  },
});

export function agentRegister(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const body = c.req.valid('json');
    if (body.plan !== 'free') {
      throw invalidField(
        'plan',
        'only "free" is accepted',
        'Self-registration is on the free plan only: a person must upgrade the organization to a paid plan',
      );
    }
    await hitEach([
      [s.limits.registerPerIp, addressKey(c.get('clientIp')), 'registrations from this address'],
      [s.limits.registerPerEmail, body.owner_email, 'registrations for this owner email'],
    ]);

    const free = (await s.plans.all()).find((p) => p.slug === 'free');
    if (!free) throw new Error('the free plan is missing');
    const { apiKey, row } = await registerAgent(s, {
      organizationName: body.organization_name,
      ownerEmail: body.owner_email,
      agentName: body.agent_name,
      agentPlatform: body.agent_platform ?? null,
      scopes: free.limits.mcp_scopes,
    });
    return c.json(
      {
        success: true as const,
        organization_id: row.organization_id,
        api_key: apiKey,
        api_key_expires_at: row.expires_at.toISOString(),
        mcp_endpoint: `${s.publicUrl}/functions/v1/mcp-server`,
        auth_endpoint: `${s.publicUrl}/functions/v1/agent-auth`,
        plan: 'free' as const,
        plan_limits: free.limits,
        message:
          'Store this API key now: it cannot be shown again. Exchange it at auth_endpoint for a one-hour JWT, then call mcp_endpoint with it.',
      },
      201,
    );
  });
}

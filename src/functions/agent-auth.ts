import { createRoute, z } from '@hono/zod-openapi';
import { exchangeApiKey, recordAttempt, safePrefix } from '../domain/agent-auth.ts';
import { addressKey } from '../platform/http/client-ip.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import { rateLimited } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';

const route = createRoute({
  method: 'post',
  path: '/agent-auth',
  summary: 'Exchange an agent API key for a JWT (at most one hour)',
  description:
    'No bearer token. Use the access_token as the bearer for the MCP server, the REST interface and functions; when it expires, call agent-auth again. 10 attempts per minute per address.',
  // Any string is an attempt: a malformed key is refused with 401 and logged like the others.
  request: jsonBody(z.object({ api_key: z.string().max(1000) })),
  responses: {
    200: jsonResponse(
      z.object({
        access_token: z.string(),
        expires_in: z.number().int(),
        organization_id: z.uuid(),
      }),
      'An agent JWT',
    ),
    ...errorResponses(400, 401, 429),
  },
});

export function agentAuth(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const { api_key } = c.req.valid('json');
    const ip = c.get('clientIp');
    const limit = await s.limits.agentAuthPerIp.hit(addressKey(ip));
    if (!limit.allowed) {
      await recordAttempt(s, {
        prefix: safePrefix(api_key),
        ip,
        outcome: 'rate_limited',
        reason: 'rate_limited',
      });
      throw rateLimited(limit.retryAfterSeconds, 'key exchanges from this address');
    }
    return c.json(await exchangeApiKey(s, api_key, ip), 200);
  });
}

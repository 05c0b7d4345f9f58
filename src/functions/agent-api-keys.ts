import { createRoute } from '@hono/zod-openapi';
import { listApiKeys, requireKeyManager, scopesUnderPlan } from '../domain/agent-keys.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { listEnvelope, listSchema, PageQuery, pageWindow } from './list-envelope.ts';
import { ApiKeySchema, keyJson } from './schemas.ts';

const route = createRoute({
  method: 'get',
  path: '/agent-api-keys',
  summary: 'The organization’s agent API keys, newest first (owners and admins; never a hash)',
  description:
    'Each key shows the scopes it asks for and its effective_scopes under the plan today, with a warning when the plan withholds some. Revoke a key by setting is_active to false on /rest/v1/agent_api_keys.',
  request: { query: PageQuery },
  responses: { 200: jsonResponse(listSchema(ApiKeySchema), 'Keys'), ...errorResponses(400, 401, 403) },
});

export function agentApiKeys(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const principal = c.get('principal');
    const organizationId = await requireKeyManager(s, principal);
    const page = c.req.valid('query');
    const { keys, total } = await listApiKeys(s, principal, pageWindow(page));
    const underPlan = await scopesUnderPlan(s, organizationId);
    const data = keys.map((k) => ({ ...keyJson(k), ...underPlan(k.scopes) }));
    return c.json(listEnvelope(data, page, total), 200);
  });
}

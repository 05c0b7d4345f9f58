import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { currentUser } from './current-user.ts';
import { endSessions } from './session.ts';

const route = createRoute({
  method: 'post',
  path: '/logout',
  summary: 'End this session (local), every session (global) or every other session (others)',
  request: { query: z.object({ scope: z.enum(['global', 'local', 'others']).default('global') }) },
  responses: { 204: { description: 'Signed out' }, ...errorResponses(401, 403) },
});

export function logoutRoutes(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const { user, sessionId } = await currentUser(s, c);
    await endSessions(s.db, c.req.valid('query').scope, user.id, sessionId);
    return c.body(null, 204);
  });
}

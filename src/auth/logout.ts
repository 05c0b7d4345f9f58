import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { currentUser } from './current-user.ts';

const route = createRoute({
  method: 'post',
  path: '/logout',
  summary: 'End this session (local), every session (global) or every other session (others)',
  request: { query: z.object({ scope: z.enum(['global', 'local', 'others']).default('global') }) },
  responses: { 204: { description: 'Signed out' }, ...errorResponses(401, 403) },
});

const SCOPES = {
  global: 'delete from auth.sessions where user_id = $1',
  local: 'delete from auth.sessions where user_id = $1 and id = $2',
  others: 'delete from auth.sessions where user_id = $1 and id <> $2',
} as const;

export function logoutRoutes(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const { user, sessionId } = await currentUser(s, c);
    const { scope } = c.req.valid('query');
    // Deleting a session deletes its refresh tokens with it (foreign key cascade).
    await s.db.query(SCOPES[scope], scope === 'global' ? [user.id] : [user.id, sessionId]);
    return c.body(null, 204);
  });
}

import { createRoute, z } from '@hono/zod-openapi';
import { SessionSchema } from '../auth/schemas.ts';
import { sessionExists } from '../auth/session.ts';
import { switchOrganization } from '../auth/switch-organization.ts';
import { unauthorized } from '../platform/errors.ts';
import { requireUser } from '../platform/http/authenticate.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';

const route = createRoute({
  method: 'post',
  path: '/organization-switch',
  summary: 'Act in another organization you belong to',
  description:
    'Sets the current organization and returns a fresh session (same shape as /auth/v1/token) whose claims name it; the calling session ends.',
  request: jsonBody(z.object({ organization_id: z.uuid() })),
  responses: { 200: jsonResponse(SessionSchema, 'A new session'), ...errorResponses(400, 401, 403, 404) },
});

export function organizationSwitch(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const { userId, claims } = requireUser(c.get('principal'));
    // This mints a new session, so a token whose session was logged out must not get that far.
    const sessionId = typeof claims.session_id === 'string' ? claims.session_id : '';
    if (!(await sessionExists(s.db, userId, sessionId)))
      throw unauthorized('This session has ended; sign in again');
    const session = await switchOrganization(
      s.sessions,
      s.db,
      { userId, sessionId },
      c.req.valid('json').organization_id,
      {
        ip: c.get('clientIp'),
        userAgent: c.req.header('user-agent'),
      },
    );
    return c.json(session, 200);
  });
}

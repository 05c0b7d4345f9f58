import { createRoute, z } from '@hono/zod-openapi';
import { SessionSchema } from '../auth/schemas.ts';
import { startSession } from '../auth/session.ts';
import { findUserById, setCurrentOrganization } from '../auth/users.ts';
import { isMemberOf } from '../domain/organizations.ts';
import { notFound } from '../platform/errors.ts';
import { requireUser } from '../platform/http/authenticate.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';

const route = createRoute({
  method: 'post',
  path: '/organization-switch',
  summary: 'Act in another organization you belong to',
  description:
    'Sets the current organization and returns a fresh session (same shape as /auth/v1/token) whose claims name it.',
  request: jsonBody(z.object({ organization_id: z.uuid() })),
  responses: { 200: jsonResponse(SessionSchema, 'A new session'), ...errorResponses(400, 401, 403, 404) },
});

export function organizationSwitch(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const principal = requireUser(c.get('principal'));
    const { organization_id } = c.req.valid('json');
    // Another tenant's id and a made-up one look the same: not found.
    if (!(await isMemberOf(s.db, principal, organization_id))) throw notFound('organization');
    const session = await s.db.transaction(async (tx) => {
      await setCurrentOrganization(tx, principal.userId, organization_id);
      const user = await findUserById(tx, principal.userId);
      if (!user) throw notFound('user');
      return startSession({ tokens: s.tokens, expiresIn: s.config.jwtExpirySeconds }, tx, user, {
        ip: c.get('clientIp'),
        userAgent: c.req.header('user-agent'),
      });
    });
    return c.json(session, 200);
  });
}

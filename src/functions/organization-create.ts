import { createRoute, z } from '@hono/zod-openapi';
import { createOrganization } from '../domain/organizations.ts';
import { CountryInput } from '../domain/phone.ts';
import { requireUser } from '../platform/http/authenticate.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { OrganizationSchema, orgJson } from './schemas.ts';

const route = createRoute({
  method: 'post',
  path: '/organization-create',
  summary: 'Create an organization on the free plan; the caller becomes its owner',
  description:
    'The caller’s current organization does not change: call organization-switch to act in the new one.',
  request: jsonBody(z.object({ name: z.string().trim().min(1).max(200), country: CountryInput.optional() })),
  responses: {
    201: jsonResponse(z.object({ organization: OrganizationSchema, role: z.literal('owner') }), 'Created'),
    ...errorResponses(400, 401, 403),
  },
});

export function organizationCreate(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const user = requireUser(c.get('principal'));
    const { name, country } = c.req.valid('json');
    const org = await s.db.transaction((tx) =>
      createOrganization(tx, { name, country, ownerUserId: user.userId }),
    );
    return c.json({ organization: orgJson(org), role: 'owner' as const }, 201);
  });
}

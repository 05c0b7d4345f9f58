import { createRoute, z } from '@hono/zod-openapi';
import { setPlan } from '../domain/organizations.ts';
import { SERVICE } from '../platform/db/database.ts';
import { requireService } from '../platform/http/authenticate.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { OrganizationSchema, orgJson } from './schemas.ts';

const route = createRoute({
  method: 'post',
  path: '/organization-plan',
  summary: 'Change an organization’s plan (service role only: operators)',
  description: 'Plan changes are human-led; `svc org set-plan` calls this.',
  request: jsonBody(z.object({ organization_id: z.uuid(), plan: z.string().min(1).max(32) })),
  responses: {
    200: jsonResponse(
      z.object({ organization: OrganizationSchema, plan_limits: z.record(z.string(), z.unknown()) }),
      'The organization on its new plan',
    ),
    ...errorResponses(400, 401, 403, 404),
  },
});

export function organizationPlan(s: Services) {
  return newRouter().openapi(route, async (c) => {
    requireService(c.get('principal'));
    const { organization_id, plan } = c.req.valid('json');
    const { organization, plan_limits } = await s.db.asPrincipal(SERVICE, (tx) =>
      setPlan(tx, organization_id, plan),
    );
    s.plans.forget(organization_id);
    return c.json({ organization: orgJson(organization), plan_limits }, 200);
  });
}

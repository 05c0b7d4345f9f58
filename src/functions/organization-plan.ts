import { createRoute, z } from '@hono/zod-openapi';
import { requirePlanChanger, setPlan } from '../domain/organizations.ts';
import { SERVICE } from '../platform/db/database.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { OrganizationSchema, orgJson } from './schemas.ts';

const route = createRoute({
  method: 'post',
  path: '/organization-plan',
  summary: 'Change an organization’s plan (its owners, acting in it; the service role: operators)',
  description:
    'Plan changes are human-led (no billing is integrated): an owner from the dashboard, or `svc org set-plan`. Admins and members are refused (403).',
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
    const { organization_id, plan } = c.req.valid('json');
    await requirePlanChanger(s, c.get('principal'), organization_id);
    const { organization, plan_limits } = await s.db.asPrincipal(SERVICE, (tx) =>
      setPlan(tx, organization_id, plan),
    );
    s.plans.forget(organization_id);
    return c.json({ organization: orgJson(organization), plan_limits }, 200);
  });
}

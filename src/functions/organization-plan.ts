import { createRoute, z } from '@hono/zod-openapi';
import { setPlan } from '../domain/organizations.ts';
import { SERVICE } from '../platform/db/database.ts';
import { forbidden } from '../platform/errors.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { OrganizationSchema, orgJson } from './schemas.ts';

const route = createRoute({
  method: 'post',
  path: '/organization-plan',
  summary: 'Change an organization’s plan (the service role: operators)',
  description:
    'What `svc org set-plan` calls. Everyone else is refused (403): owners change their plan through billing (billing-checkout, billing-portal) when it is configured, and otherwise ask the operator.',
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
    // A ceiling anyone can lift is none: only the operator moves plans by hand (docs/billing.md).
    if (c.get('principal').kind !== 'service')
      throw forbidden(
        'Plans are changed by the service’s operator, or by an owner through billing (Upgrade or Manage billing on the dashboard)',
      );
    const { organization, plan_limits } = await s.db.asPrincipal(SERVICE, (tx) =>
      setPlan(tx, organization_id, plan),
    );
    s.plans.forget(organization_id);
    return c.json({ organization: orgJson(organization), plan_limits }, 200);
  });
}

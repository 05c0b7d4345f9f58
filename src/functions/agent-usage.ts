import { createRoute, z } from '@hono/zod-openapi';
import { usageReport } from '../domain/usage.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import { domainDeps, type Services } from '../services.ts';

const Counter = z.object({
  used: z.number(),
  limit: z.number().nullable(),
  remaining: z.number().nullable(),
  percent: z.number().nullable(),
  period: z.enum(['total', 'month', 'day']),
});

const route = createRoute({
  method: 'get',
  path: '/agent-usage',
  summary: 'Plan, usage against every limit, warnings at 80 %, upgrade guidance, and data retention',
  description: 'For agents and for organization owners and admins.',
  responses: {
    200: jsonResponse(
      z.object({
        plan: z.object({ slug: z.string(), name: z.string(), price_usd: z.number() }),
        usage: z.record(z.string(), Counter),
        warnings: z.array(
          z.union([
            z.object({
              resource: z.string(),
              used: z.number(),
              limit: z.number(),
              percent: z.number(),
              message: z.string(),
            }),
            z
              .object({
                resource: z.literal('connected_account'),
                account_id: z.uuid(),
                provider: z.string(),
                message: z.string(),
              })
              .openapi({
                description: 'An account whose token stopped working: a person must connect it again',
              }),
          ]),
        ),
        upgrade: z.object({ recommended_plan: z.string(), reason: z.string() }).nullable(),
        retention: z
          .object({ days: z.number().int(), message: z.string() })
          .openapi({ description: 'How long the plan keeps data before the daily purge deletes it' }),
        generated_at: z.string(),
      }),
      'Usage',
    ),
    ...errorResponses(401, 403),
  },
});

export function agentUsage(s: Services) {
  return newRouter().openapi(route, async (c) =>
    c.json(await usageReport(domainDeps(s), c.get('principal')), 200),
  );
}

import { createRoute, z } from '@hono/zod-openapi';
import { billingAccount } from '../domain/billing.ts';
import { requireCurrentOrg } from '../domain/organizations.ts';
import { forbidden } from '../platform/errors.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';

// What the dashboard's plan panel shows (docs/billing.md): the plan, every plan's price and what an
// additional agent costs on it, whether owners pay through Stripe here, the subscription's state,
// and, without billing, whom to ask for another plan.

const route = createRoute({
  method: 'get',
  path: '/billing',
  summary: 'The plan, prices, and how this organization changes plan',
  description:
    'For the organization’s members. `billing_enabled` false: the operator changes plans (`contact`).',
  responses: {
    200: jsonResponse(
      z.object({
        plan: z.string(),
        billing_enabled: z.boolean(),
        plans: z.array(
          z.object({
            slug: z.string(),
            name: z.string(),
            price_usd: z.number(),
            additional_agent_usd: z.number().nullable(),
            agents_included: z.number().nullable(),
          }),
        ),
        subscription: z
          .object({
            status: z.string().nullable(),
            paid_plan: z.string().nullable(),
            additional_agents: z.number().int(),
            grace_until: z.string().nullable(),
          })
          .nullable(),
        contact: z.string().nullable(),
        message: z.string(),
      }),
      'Billing',
    ),
    ...errorResponses(401, 403),
  },
});

export function billingStatus(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const principal = c.get('principal');
    if (principal.kind !== 'user') throw forbidden('Billing is for the organization’s people');
    const org = await s.db.asPrincipal(principal, (tx) => requireCurrentOrg(tx), { readOnly: true });
    const [plan, plans, account] = await Promise.all([
      s.plans.forOrganization(org),
      s.plans.all(),
      billingAccount(s.db, org),
    ]);
    const prices = await s.db.query<{ slug: string; extra: string | null }>(
      'select slug, extra_agent_price_usd as extra from public.plans',
    );
    const enabled = s.config.billing !== null;
    const contact = s.config.billingContact ?? null;
    const message = enabled
      ? 'Owners choose a paid plan with Upgrade and change or cancel it with Manage billing.'
      : `Plans are changed by whoever runs this service${contact ? ` (${contact})` : ''}: ask them to move your organization to another plan.`;
    return c.json(
      {
        plan: plan?.slug ?? 'free',
        billing_enabled: enabled,
        plans: plans.map((p) => {
          const extra = prices.find((r) => r.slug === p.slug)?.extra;
          return {
            slug: p.slug,
            name: p.name,
            price_usd: Number(p.price_usd),
            additional_agent_usd: extra == null ? null : Number(extra),
            agents_included: p.limits.agents,
          };
        }),
        subscription:
          enabled && account
            ? {
                status: account.subscription_status,
                paid_plan: account.paid_plan,
                additional_agents: account.extra_agents,
                grace_until: account.grace_until?.toISOString() ?? null,
              }
            : null,
        contact,
        message,
      },
      200,
    );
  });
}

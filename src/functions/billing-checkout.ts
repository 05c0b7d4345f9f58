import { createRoute, z } from '@hono/zod-openapi';
import { billingNotConfigured, requireBillingOwner } from '../domain/billing.ts';
import { startCheckout, startPortal } from '../domain/billing-sessions.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';

// billing-checkout and billing-portal: where an owner goes to pay for a plan or to manage what
// they pay (docs/billing.md). Owners only; without billing configured, 409 billing_not_configured.
// The answer is a Stripe page's URL; the plan changes later, when Stripe's signed event arrives.

const UrlAnswer = z.object({ url: z.string().url() });

const checkout = createRoute({
  method: 'post',
  path: '/billing-checkout',
  summary: 'Start paying for a plan: a Stripe Checkout page (owners)',
  description:
    'Answers the URL of a Stripe Checkout session (subscription) for the organization. The plan changes only when Stripe’s signed event says the subscription is paid.',
  request: jsonBody(z.object({ plan: z.string().min(1).max(32) })),
  responses: {
    200: jsonResponse(UrlAnswer, 'The Checkout page to send the owner to'),
    ...errorResponses(400, 401, 403, 409, 502),
  },
});

const portal = createRoute({
  method: 'post',
  path: '/billing-portal',
  summary: 'Manage billing: a Stripe Customer Portal page (owners)',
  description: 'Change plan, add agents, update the card or cancel, on Stripe’s Customer Portal.',
  responses: {
    200: jsonResponse(UrlAnswer, 'The portal page to send the owner to'),
    ...errorResponses(401, 403, 409, 502),
  },
});

/** Where Stripe sends the owner back: the dashboard's overview. */
const returnUrl = (s: Services) => `${s.config.siteUrl ?? s.publicUrl}/app`;

export function billingSessions(s: Services) {
  return newRouter()
    .openapi(checkout, async (c) => {
      const principal = c.get('principal');
      const organizationId = await requireBillingOwner(s, principal);
      const billing = s.config.billing;
      if (!billing) throw billingNotConfigured();
      const email = typeof principal.claims.email === 'string' ? principal.claims.email : null;
      const url = await startCheckout(s.db, billing, {
        organizationId,
        plan: c.req.valid('json').plan,
        email,
        returnUrl: returnUrl(s),
      });
      return c.json({ url }, 200);
    })
    .openapi(portal, async (c) => {
      const organizationId = await requireBillingOwner(s, c.get('principal'));
      const billing = s.config.billing;
      if (!billing) throw billingNotConfigured();
      return c.json(
        { url: await startPortal(s.db, billing, { organizationId, returnUrl: returnUrl(s) }) },
        200,
      );
    });
}

import type { Queryable } from '../platform/db/database.ts';
import { AppError, fromPgError, type PgError } from '../platform/errors.ts';

// What an additional agent costs, said before one is created (docs/decisions.md "Additional
// agents are seats bought in the portal"): the agents ceiling's refusal names the price per agent
// per month on the organization's plan and where to buy one. Buying is a human act on Stripe's
// Customer Portal (the subscription's per-agent item quantity); the service never raises a bill
// on an API call.

/** The agents ceiling's refusal, with the price and the way to more agents added; other errors as they are. */
export async function explainAgentCeiling(
  q: Queryable,
  thrown: unknown,
  billingEnabled: boolean,
): Promise<unknown> {
  const err = (thrown as PgError)?.code === 'SV403' ? fromPgError(thrown as PgError) : thrown;
  if (!(err instanceof AppError) || err.code !== 'plan_limit_exceeded' || err.details.resource !== 'agents')
    return thrown;
  const [plan] = await q.query<{ name: string; extra: string | null }>(
    'select name, extra_agent_price_usd as extra from public.plans where slug = $1',
    [String(err.details.plan ?? '')],
  );
  if (!plan) return err;
  const price = plan.extra == null ? null : Number(plan.extra);
  const base = `The ${plan.name} plan’s ${err.details.limit} agents are all in use.`;
  const message =
    price === null
      ? `${base} The ${plan.name} plan has no additional agents: move to a paid plan for more.`
      : billingEnabled
        ? `${base} An additional agent costs ${price} USD a month: an owner adds agents under Manage billing, then creates the key.`
        : `${base} An additional agent costs ${price} USD a month: ask the operator of this service to add one.`;
  return new AppError(
    err.status,
    err.code,
    message,
    { ...err.details, additional_agent_usd: price },
    err.extra,
  );
}

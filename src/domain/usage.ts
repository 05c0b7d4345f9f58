import type { Principal } from '../platform/db/database.ts';
import { agentKeyGone, forbidden } from '../platform/errors.ts';
import { accountsNeedingReconnect } from './connection-health.ts';
import type { Deps } from './deps.ts';
import type { OrgPlan } from './plan-cache.ts';
import { retentionNote } from './retention.ts';

type Period = 'total' | 'month' | 'day';
const RESOURCES: [resource: string, period: Period][] = [
  ['contacts', 'total'],
  ['inventory_items', 'total'],
  ['warehouses', 'total'],
  ['agents', 'total'],
  ['orders', 'month'],
  ['outbound_messages', 'month'],
  ['ai_annotations', 'month'],
  ['api_calls_per_day', 'day'],
];
export const WARNING_PERCENT = 80;

/**
 * What the service creates with every organization (its default warehouse): a warning is about
 * what the organization itself adds, so a new organization is not told on its first day that it
 * is near a limit because of the one warehouse it was given. Past this, the usual 80 % rule.
 */
const PROVIDED: Record<string, number> = { warehouses: 1 };

type Counter = {
  used: number;
  limit: number | null;
  remaining: number | null;
  percent: number | null;
  period: Period;
};

/** A limit of 0 with nothing used is a feature the plan lacks, not a resource running out. */
function counter(used: number, limit: number | null, period: Period): Counter {
  if (limit === null) return { used, limit, remaining: null, percent: null, period };
  const percent = limit === 0 ? (used > 0 ? 100 : 0) : Math.round((used / limit) * 1000) / 10;
  return { used, limit, remaining: Math.max(0, limit - used), percent, period };
}

/**
 * agent-usage: the plan, every resource's use against its limit, a warning for each at or above
 * 80 %, which plan to move to, and how long data is kept (docs/retention.md). Counts come from the database (app.current_usage) in the
 * caller's own transaction; API calls from the daily counters.
 */
export async function usageReport(deps: Pick<Deps, 'db' | 'plans' | 'apiCallsToday'>, principal: Principal) {
  const [[row], reconnect] = await deps.db.asPrincipal(
    principal,
    async (tx) => [
      await tx.query<{
        org: string | null;
        role: string | null;
        plan: string;
        usage: Record<string, number>;
      }>(
        `select app.current_org_id() as org, app.org_role() as role, o.plan, app.current_usage() as usage
           from public.organizations o where o.id = app.current_org_id()`,
      ),
      await accountsNeedingReconnect(tx),
    ],
    { readOnly: true },
  );
  if (!row?.org && principal.kind === 'agent') throw agentKeyGone();
  if (!row?.org || !['owner', 'admin', 'agent'].includes(row.role ?? '')) {
    throw forbidden('Usage is for agents and organization owners or admins');
  }
  const plans = await deps.plans.all();
  const plan = plans.find((p) => p.slug === row.plan) as OrgPlan;
  // Agents bought beyond the plan's own (billing) raise that ceiling, as app.enforce_plan_ceiling
  // counts them; the billing row is the service's, read on its path for the caller's organization.
  const [bought] = await deps.db.query<{ n: number }>(
    'select b.extra_agents as n from app.billing_accounts b where b.organization_id = $1',
    [row.org],
  );
  const limitOf = (r: string) => {
    const limit = plan.limits[r as keyof OrgPlan['limits']] as number | null;
    return r === 'agents' && limit !== null ? limit + (bought?.n ?? 0) : limit;
  };
  // Refused calls keep counting in the daily counter; what the plan granted is at most its limit.
  const calls = await deps.apiCallsToday(row.org);
  const callLimit = plan.limits.api_calls_per_day;
  const used: Record<string, number> = {
    ...row.usage,
    api_calls_per_day: callLimit === null ? calls : Math.min(calls, callLimit),
  };
  const usage = Object.fromEntries(
    RESOURCES.map(([r, period]) => [r, counter(Number(used[r] ?? 0), limitOf(r), period)]),
  );
  const warnings = RESOURCES.flatMap(([r]) => {
    const c = usage[r] as Counter;
    if (
      c.limit === null ||
      c.percent === null ||
      c.percent < WARNING_PERCENT ||
      (c.limit === 0 && c.used === 0) ||
      c.used <= (PROVIDED[r] ?? 0)
    )
      return [];
    const message = `${r.replaceAll('_', ' ')}: ${c.used} of ${c.limit} used (${c.percent}%)`;
    return [{ resource: r, used: c.used, limit: c.limit, percent: c.percent, message }];
  });
  // An account whose token stopped working sends nothing until a person connects it again.
  const accountWarnings = reconnect.map((a) => ({
    resource: 'connected_account' as const,
    account_id: a.id,
    provider: a.provider,
    message: `${a.provider} account ${a.name ?? a.external_id} needs to be connected again: ${a.reason ?? 'its token stopped working.'}`,
  }));
  const next = plans.find((p) => p.rank === plan.rank + 1);
  const readOnly = !plan.limits.mcp_scopes.includes('write');
  const upgrade =
    next && (warnings.length > 0 || readOnly)
      ? {
          recommended_plan: next.slug,
          reason:
            warnings.length > 0
              ? `Near or at the ${plan.name} plan's limits for ${warnings.map((w) => w.resource).join(', ')}; ${next.name} raises them. A person must upgrade the plan.`
              : `The ${plan.name} plan gives agents read-only access; ${next.name} adds write access. A person must upgrade the plan.`,
        }
      : null;
  return {
    plan: { slug: plan.slug, name: plan.name, price_usd: Number(plan.price_usd) },
    usage,
    warnings: [...warnings, ...accountWarnings],
    upgrade,
    retention: retentionNote(plan.limits.data_retention_days),
    generated_at: new Date().toISOString(),
  };
}

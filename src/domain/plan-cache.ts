import type { Database } from '../platform/db/database.ts';

export type PlanLimits = {
  contacts: number | null;
  orders: number | null;
  inventory_items: number | null;
  outbound_messages: number | null;
  api_calls_per_day: number | null;
  warehouses: number | null;
  ai_annotations: number | null;
  agents: number | null;
  mcp_scopes: string[];
  data_retention_days: number;
};

export type OrgPlan = { slug: string; name: string; price_usd: string; rank: number; limits: PlanLimits };

export type PlanCache = {
  /** The organization's plan; null for an unknown organization. */
  forOrganization(organizationId: string): Promise<OrgPlan | null>;
  /** The same answer without a promise while it is cached; undefined when it is not (or stale). */
  cached(organizationId: string): OrgPlan | null | undefined;
  /** Every plan, cheapest first (upgrade guidance). */
  all(): Promise<OrgPlan[]>;
  /** Forgets an organization's plan (after a plan change in this process). */
  forget(organizationId: string): void;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PLAN_SQL = `select p.slug, p.name, p.price_usd, p.rank, app.plan_limits(p) as limits from public.plans p`;

/**
 * Plans change rarely and by an operator, so an organization's plan is cached for `ttlMs`: a plan
 * change reaches the daily quota of other processes within that time (this one forgets at once). Ceilings on writes never use this cache: the
 * database reads the plan in the same transaction.
 */
export function createPlanCache(db: Database, ttlMs = 30_000): PlanCache {
  const byOrg = new Map<string, { plan: OrgPlan | null; until: number }>();
  let plans: { list: OrgPlan[]; until: number } | undefined;
  const cached = (organizationId: string) => {
    const hit = byOrg.get(organizationId);
    return hit && hit.until > Date.now() ? hit.plan : undefined;
  };
  return {
    cached,
    async forOrganization(organizationId) {
      const hit = cached(organizationId);
      if (hit !== undefined) return hit;
      const [row] = UUID.test(organizationId)
        ? await db.query<OrgPlan>(
            `${PLAN_SQL} join public.organizations o on o.plan = p.slug where o.id = $1`,
            [organizationId],
          )
        : [];
      if (byOrg.size > 10_000) byOrg.clear();
      byOrg.set(organizationId, { plan: row ?? null, until: Date.now() + ttlMs });
      return row ?? null;
    },
    forget(organizationId) {
      byOrg.delete(organizationId);
    },
    async all() {
      if (!plans || plans.until < Date.now()) {
        plans = { list: await db.query<OrgPlan>(`${PLAN_SQL} order by p.rank`), until: Date.now() + ttlMs };
      }
      return plans.list;
    },
  };
}

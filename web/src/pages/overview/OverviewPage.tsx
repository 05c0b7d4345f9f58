import './overview.css';
import { useQuery } from '@tanstack/react-query';
import { canManage } from '../../lib/claims';
import { useClaims } from '../../lib/session';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading, Page } from '../../ui/Page';
import { BillingPanel } from './BillingPanel';
import { Today } from './Today';
import { UsageMeters } from './UsageMeters';
import { fetchOrgPlan, fetchPlans, fetchUsage, usd } from './usage';

/** Owners and admins: the plan with agent-usage's meters, warnings and guidance. */
function PlanAndUsage({ owner }: { owner: boolean }) {
  const usage = useQuery({ queryKey: ['usage'], queryFn: fetchUsage });
  if (usage.isPending) return <Loading />;
  if (!usage.data) return <ErrorNote error={usage.error} />;
  const { plan } = usage.data;
  return (
    <>
      <p>
        Your organization is on the <strong>{plan.name}</strong> plan ({usd(plan.price_usd)} a month).
      </p>
      <BillingPanel owner={owner} />
      <UsageMeters usage={usage.data} owner={owner} />
    </>
  );
}

/** Members: the plan's name over /rest/v1; usage figures are for owners and admins (agent-usage). */
function PlanOnly({ organizationId }: { organizationId: string }) {
  const slug = useQuery({
    queryKey: ['org-plan', organizationId],
    queryFn: () => fetchOrgPlan(organizationId),
  });
  const plans = useQuery({ queryKey: ['plans'], queryFn: fetchPlans, staleTime: Number.POSITIVE_INFINITY });
  const plan = plans.data?.find((p) => p.slug === slug.data);
  return (
    <>
      <ErrorNote error={slug.error ?? plans.error} />
      {plan ? (
        <p>
          Your organization is on the <strong>{plan.name}</strong> plan ({usd(plan.price_usd)} a month).
        </p>
      ) : (
        !slug.error && <Loading />
      )}
      <p className="hint">Owners and admins see the usage against each limit; only owners manage billing.</p>
    </>
  );
}

export function OverviewPage() {
  const claims = useClaims();
  const organizationId = claims.organizationId ?? '';
  return (
    <Page title="Overview">
      <Today />
      <section className="panel" aria-labelledby="plan-heading">
        <h2 id="plan-heading">Plan and usage</h2>
        {canManage(claims) ? (
          <PlanAndUsage owner={claims.role === 'owner'} />
        ) : (
          <PlanOnly organizationId={organizationId} />
        )}
      </section>
    </Page>
  );
}

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { invoke } from '../../lib/api';
import { ErrorNote } from '../../ui/ErrorNote';
import { Select } from '../../ui/Field';
import { Loading } from '../../ui/Page';
import { usd } from './usage';

/** The billing function's answer (src/functions/billing-status.ts). */
type Billing = {
  plan: string;
  billing_enabled: boolean;
  plans: {
    slug: string;
    name: string;
    price_usd: number;
    additional_agent_usd: number | null;
    agents_included: number | null;
  }[];
  subscription: {
    status: string | null;
    paid_plan: string | null;
    additional_agents: number;
    grace_until: string | null;
  } | null;
  contact: string | null;
  message: string;
};

const LIVE = ['active', 'trialing', 'past_due', 'unpaid', 'paused'];

/**
 * Back from Stripe (Checkout: `success` or `cancelled`; the portal: `returned`): the plan changes
 * once Stripe's event arrives, so the panel looks again for a minute.
 */
const backFromStripe = () => new URLSearchParams(window.location.search).get('billing');

/**
 * How this organization changes plan. With billing: owners upgrade through Stripe Checkout and
 * manage or cancel in Stripe's Customer Portal (the plan follows Stripe's confirmation, not the
 * click). Without: the plan and whom to ask.
 */
export function BillingPanel({ owner }: { owner: boolean }) {
  const returned = backFromStripe();
  const queries = useQueryClient();
  const billing = useQuery({
    queryKey: ['billing'],
    queryFn: () => invoke<Billing>('billing'),
    // Back from Stripe, the plan changes when its event has been through the worker: asked every
    // 2 s for a minute, then every 10 s for three more (an event retried after a failed attempt
    // waits WEBHOOK_RETRY_BACKOFF_SECONDS first).
    refetchInterval: (q) =>
      !returned || returned === 'cancelled'
        ? false
        : q.state.dataUpdateCount < 30
          ? 2000
          : q.state.dataUpdateCount < 48
            ? 10_000
            : false,
  });
  const plan = billing.data?.plan;
  const shown = useRef(plan);
  // The meters above follow a plan Stripe changed while the page was open.
  useEffect(() => {
    if (shown.current && plan && plan !== shown.current) queries.invalidateQueries({ queryKey: ['usage'] });
    shown.current = plan;
  }, [plan, queries]);
  const go = useMutation({
    mutationFn: ({ name, body }: { name: string; body?: unknown }) =>
      invoke<{ url: string }>(name, { method: 'POST', body: body ?? {} }),
    onSuccess: ({ url }) => window.location.assign(url),
  });
  const [choice, setChoice] = useState('');
  if (billing.isPending) return <Loading />;
  if (!billing.data) return <ErrorNote error={billing.error} />;
  const b = billing.data;
  const paid = b.plans.filter((p) => p.price_usd > 0);
  const subscribed = b.subscription && LIVE.includes(b.subscription.status ?? '');
  const chosen = choice || paid[0]?.slug || '';
  return (
    <div className="billing">
      <ul className="prices" aria-label="Plans and prices">
        {b.plans.map((p) => (
          <li key={p.slug} aria-current={p.slug === b.plan ? 'true' : undefined}>
            <strong>{p.name}</strong>: {usd(p.price_usd)} a month
            {p.agents_included !== null &&
              `, ${p.agents_included} agent${p.agents_included === 1 ? '' : 's'} included`}
            {p.additional_agent_usd !== null &&
              `, each additional agent ${usd(p.additional_agent_usd)} a month`}
          </li>
        ))}
      </ul>
      {returned === 'success' && (
        <p role="status">Thank you: your plan changes as soon as Stripe confirms the payment.</p>
      )}
      {b.subscription?.grace_until && (
        <p role="alert">
          The last payment failed. Update the card under Manage billing before{' '}
          {new Date(b.subscription.grace_until).toLocaleString()}, or the organization moves to the Free plan
          (nothing is deleted).
        </p>
      )}
      {!b.billing_enabled ? (
        <p className="hint">{b.message}</p>
      ) : !owner ? (
        <p className="hint">Only owners manage billing.</p>
      ) : subscribed ? (
        <button type="button" disabled={go.isPending} onClick={() => go.mutate({ name: 'billing-portal' })}>
          Manage billing
        </button>
      ) : (
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            go.mutate({ name: 'billing-checkout', body: { plan: chosen } });
          }}
        >
          <Select label="Plan to upgrade to" value={chosen} onChange={(e) => setChoice(e.target.value)}>
            {paid.map((p) => (
              <option key={p.slug} value={p.slug}>
                {p.name} ({usd(p.price_usd)} a month)
              </option>
            ))}
          </Select>
          <button type="submit" disabled={go.isPending || !chosen}>
            Upgrade
          </button>
        </form>
      )}
      <ErrorNote error={go.error} />
    </div>
  );
}

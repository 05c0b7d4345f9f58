import { useQuery } from '@tanstack/react-query';
import { type Counter, fetchPlans, type Usage } from './usage';

const PERIOD = { total: 'in all', month: 'this month', day: 'today' };
const NAMES: Record<string, string> = {
  ai_annotations: 'AI annotations',
  api_calls_per_day: 'API calls per day',
};
const label = (resource: string) => {
  if (NAMES[resource]) return NAMES[resource];
  const words = resource.replaceAll('_', ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
};

function Meter({ resource, c, near }: { resource: string; c: Counter; near: boolean }) {
  const name = label(resource);
  return (
    <li className={near ? 'meter near' : 'meter'}>
      <span className="meter-name">{name}</span>
      {c.limit === null ? (
        <span>
          {c.used} {PERIOD[c.period]} · unlimited
        </span>
      ) : (
        <>
          <meter aria-label={name} min={0} max={Math.max(c.limit, 1)} high={c.limit * 0.8} value={c.used} />
          <span>
            {c.used} of {c.limit} {PERIOD[c.period]}
            {c.percent !== null && ` (${c.percent}%)`}
          </span>
        </>
      )}
    </li>
  );
}

/**
 * What another plan would change, said to the person reading it: agent-usage's `reason` is
 * written for agents ("a person must upgrade"), so the dashboard words its own from the same facts.
 */
function Guidance({ usage, owner }: { usage: Usage; owner: boolean }) {
  const plans = useQuery({ queryKey: ['plans'], queryFn: fetchPlans, staleTime: Number.POSITIVE_INFINITY });
  if (!usage.upgrade) return null;
  const next = plans.data?.find((p) => p.slug === usage.upgrade?.recommended_plan)?.name;
  if (!next) return null;
  const near = usage.warnings
    .filter((w) => w.resource in usage.usage)
    .map((w) => label(w.resource).toLowerCase());
  const why = near.length
    ? `The ${next} plan raises the limits for ${near.join(', ')}.`
    : `On the ${usage.plan.name} plan AI agents can read your records but not change them; the ${next} plan lets them create and change records.`;
  return (
    <p className="upgrade">
      {why} {owner ? '' : 'The organization’s owner can change the plan.'}
    </p>
  );
}

/** Every limit of the plan with its use, agent-usage's warnings, and what another plan changes. */
export function UsageMeters({ usage, owner }: { usage: Usage; owner: boolean }) {
  const warned = new Set(usage.warnings.map((w) => w.resource));
  return (
    <>
      {usage.warnings.length > 0 && (
        <div className="warning" role="status">
          <h3>Near the plan’s limits</h3>
          <ul className="plain">
            {usage.warnings.map((w) => (
              <li key={w.resource}>{w.message}</li>
            ))}
          </ul>
        </div>
      )}
      <Guidance usage={usage} owner={owner} />
      <ul className="plain meters" aria-label="Usage against the plan’s limits">
        {Object.entries(usage.usage).map(([resource, c]) => (
          <Meter key={resource} resource={resource} c={c} near={warned.has(resource)} />
        ))}
      </ul>
      <p className="hint">{usage.retention.message}</p>
    </>
  );
}

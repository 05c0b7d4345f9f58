import type { Counter, Usage } from './usage';

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

function Meter({ resource, c }: { resource: string; c: Counter }) {
  const near = c.percent !== null && c.percent >= 80 && !(c.limit === 0 && c.used === 0);
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

/** Every limit of the plan with its use, and agent-usage's own warnings and guidance, word for word. */
export function UsageMeters({ usage }: { usage: Usage }) {
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
      {usage.upgrade && (
        <p className="upgrade">
          <strong>Upgrade guidance:</strong> {usage.upgrade.reason} (recommended plan:{' '}
          {usage.upgrade.recommended_plan})
        </p>
      )}
      <ul className="plain meters" aria-label="Usage against the plan’s limits">
        {Object.entries(usage.usage).map(([resource, c]) => (
          <Meter key={resource} resource={resource} c={c} />
        ))}
      </ul>
      <p className="hint">{usage.retention.message}</p>
    </>
  );
}

import type { Principal } from '../platform/db/database.ts';
import { agentKeyGone } from '../platform/errors.ts';
import { tokenScopes } from './agent-keys.ts';
import type { Deps } from './deps.ts';
import { usageReport } from './usage.ts';

/**
 * svc://organization/info: the organization, its plan with limits and usage, how long its data is
 * kept, and who is asking (the agent's key, the scopes its token grants, when the token expires).
 */
export async function organizationInfo(
  deps: Pick<Deps, 'db' | 'plans' | 'apiCallsToday'>,
  principal: Extract<Principal, { kind: 'agent' }>,
) {
  const report = await usageReport(deps, principal);
  const [org] = await deps.db.asPrincipal(
    principal,
    (tx) =>
      tx.query<{ id: string; name: string; plan: string; created_at: string }>(
        `select o.id, o.name, o.plan, to_jsonb(o.created_at) #>> '{}' as created_at
           from public.organizations o where o.id = app.current_org_id()`,
      ),
    { readOnly: true },
  );
  if (!org) throw agentKeyGone();
  // The caller's own key; agents do not otherwise read the key table.
  const [key] = await deps.db.query<{
    name: string;
    key_prefix: string | null;
    scopes: string[];
    expires_at: string;
  }>(
    `select name, key_prefix, scopes, to_jsonb(expires_at) #>> '{}' as expires_at
       from public.agent_api_keys where id = $1 and organization_id = $2`,
    [principal.keyId, org.id],
  );
  const plan = await deps.plans.forOrganization(org.id);
  const { exp } = principal.claims as { exp?: number };
  return {
    organization: org,
    plan: { ...report.plan, limits: plan?.limits ?? null },
    usage: report.usage,
    warnings: report.warnings,
    upgrade: report.upgrade,
    retention: report.retention,
    auth: {
      kind: 'agent',
      key_id: principal.keyId,
      key_name: key?.name ?? null,
      key_prefix: key?.key_prefix ?? null,
      key_scopes: key?.scopes ?? [],
      key_expires_at: key?.expires_at ?? null,
      granted_scopes: tokenScopes(principal),
      token_expires_at: typeof exp === 'number' ? new Date(exp * 1000).toISOString() : null,
    },
  };
}

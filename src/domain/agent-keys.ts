import { randomInt } from 'node:crypto';
import { type Principal, type Queryable, SERVICE } from '../platform/db/database.ts';
import { forbidden, insufficientScope, invalidField, notFound } from '../platform/errors.ts';
import type { Deps } from './deps.ts';
import { requireCurrentOrg, requireOrgAdmin } from './organizations.ts';
import type { OrgPlan } from './plan-cache.ts';

export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const API_KEY_FORMAT = /^svc_ak_[A-Za-z0-9]{48}$/;
export const DEFAULT_KEY_DAYS = 90;
export const MAX_KEY_DAYS = 365;
const DAY_MS = 24 * 3600 * 1000;

/** `svc_ak_` + 48 characters drawn uniformly from a CSPRNG (randomInt has no modulo bias). */
export function generateApiKey(): string {
  let body = '';
  for (let i = 0; i < 48; i++) body += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return `svc_ak_${body}`;
}

/** The part stored in clear and used to find the key: `svc_ak_` + 5 characters. */
export const keyPrefix = (apiKey: string) => apiKey.slice(0, 12);

/** admin implies write, write implies read; the result is capped by the plan's MCP scopes. */
export function grantedScopes(keyScopes: string[], planScopes: string[]): Scope[] {
  const rank = Math.max(...keyScopes.map((s) => SCOPES.indexOf(s as Scope)));
  return SCOPES.filter((s, i) => i <= rank && planScopes.includes(s));
}

/** The scopes an agent's token grants (already expanded and capped by the plan at exchange). */
export function tokenScopes(principal: Principal): string[] {
  const scopes = principal.claims.agent_scopes;
  return Array.isArray(scopes) ? scopes.filter((x): x is string => typeof x === 'string') : [];
}

/** Whether scopes include `required`, admin implying write and write implying read. */
const covers = (scopes: string[], required: Scope) =>
  SCOPES.slice(SCOPES.indexOf(required)).some((s) => scopes.includes(s));

/** Whether the caller's token lets it do what needs `required`: requireScope's passing test. */
export const tokenCovers = (principal: Principal, required: Scope) =>
  principal.kind !== 'agent' || covers(tokenScopes(principal), required);

/** The cheapest plan whose agents may use `scope` (plans come cheapest first). */
export const minimumPlanFor = (plans: OrgPlan[], scope: Scope) =>
  plans.find((p) => p.limits.mcp_scopes.includes(scope)) ?? null;

/**
 * What a key's scopes grant under its organization's plan today (what its next JWT carries), and
 * a warning when the plan withholds a scope the key asks for; null when it withholds nothing.
 */
export function effectiveScopes(keyScopes: string[], plan: OrgPlan, plans: OrgPlan[]) {
  const effective = grantedScopes(keyScopes, plan.limits.mcp_scopes);
  const withheld = keyScopes.filter((s) => !effective.includes(s as Scope)) as Scope[];
  if (withheld.length === 0) return { effective_scopes: effective, warning: null };
  const highest = SCOPES.filter((s) => withheld.includes(s)).at(-1) as Scope;
  const upgrade = minimumPlanFor(plans, highest)?.name ?? 'a higher';
  const warning = `The ${plan.name} plan gives agents only ${effective.join(', ') || 'no'} access: this key's ${withheld.join(', ')} scope${withheld.length > 1 ? 's take' : ' takes'} effect once the organization is on the ${upgrade} plan or above (an owner changes the plan on the dashboard’s overview), at the key's next agent-auth exchange`;
  return { effective_scopes: effective, warning };
}

/** effectiveScopes for the keys of one organization, its plan read once (cached: plan-cache.ts). */
export async function scopesUnderPlan(deps: Pick<Deps, 'plans'>, organizationId: string) {
  const [plan, all] = await Promise.all([deps.plans.forOrganization(organizationId), deps.plans.all()]);
  if (!plan) throw notFound('organization');
  return (keyScopes: string[]) => effectiveScopes(keyScopes, plan, all);
}

/** What requireScope reads (kept by this name for src/rest). */
export type ScopeDeps = Pick<Deps, 'db' | 'plans'>;

/**
 * Refuses an agent whose token lacks `required` (admin implies write, write implies read), before
 * the database is asked; people are left to row-level security. The refusal says which of the
 * three causes it is, since each has a different remedy: the plan (details.minimum_plan; only a
 * person can upgrade), the key (a person creates one with the scope), or a token older than an
 * upgrade (call agent-auth again). Looking that up costs nothing on calls that pass.
 */
export async function requireScope(
  deps: ScopeDeps,
  principal: Principal,
  required: Scope,
  what = 'This',
): Promise<void> {
  if (principal.kind !== 'agent' || tokenCovers(principal, required)) return;
  const granted = tokenScopes(principal);
  const details: Record<string, unknown> = { required_scope: required, granted_scopes: granted };
  const org = String(principal.claims.organization_id ?? '');
  const [plan, plans, [key]] = await Promise.all([
    deps.plans.forOrganization(org),
    deps.plans.all(),
    org
      ? deps.db.query<{ scopes: string[] }>(
          'select scopes from public.agent_api_keys where id = $1::uuid and organization_id = $2::uuid',
          [principal.keyId, org],
        )
      : [],
  ]);
  const keyHasIt = covers(key?.scopes ?? [], required);
  let message = `${what} needs the ${required} scope`;
  if (plan && !plan.limits.mcp_scopes.includes(required)) {
    const minimum = minimumPlanFor(plans, required);
    Object.assign(details, { plan: plan.slug, minimum_plan: minimum?.slug ?? null });
    message += `, which the ${plan.name} plan does not give agents: an owner of the organization must move it to the ${minimum?.name ?? 'a higher'} plan or above (on the dashboard’s overview), then call agent-auth again`;
    if (!keyHasIt)
      message += `; this key does not ask for ${required} either, so a key with it is needed too`;
  } else if (keyHasIt) {
    message += ': the plan grants it now but this token was issued before; call agent-auth again';
  } else {
    message += ': this key does not have it; an owner or admin can create a key with that scope';
  }
  throw insufficientScope(message, details);
}

/** When a new key expires: the requested time (future, at most a year away) or the default. */
export function keyExpiry(requested: string | undefined, now = Date.now()): Date {
  if (requested === undefined) return new Date(now + DEFAULT_KEY_DAYS * DAY_MS);
  const at = new Date(requested);
  if (Number.isNaN(at.getTime()) || at.getTime() <= now || at.getTime() > now + MAX_KEY_DAYS * DAY_MS) {
    throw invalidField(
      'expires_at',
      `Choose an expiry date in the future, at most ${MAX_KEY_DAYS} days from today`,
    );
  }
  return at;
}

export type NewKey = {
  name: string;
  scopes: string[];
  expiresAt: Date;
  agentPlatform?: string | null;
  createdBy?: string | null;
};

/** Writes the key row into `organizationId` inside the caller's transaction. */
export type InsertKey = (tx: Queryable, organizationId: string) => Promise<KeyRow>;

export type KeyRow = {
  id: string;
  organization_id: string;
  name: string;
  /** Null for a grant (a connected app, src/domain/oauth-grants.ts): it has no secret. */
  key_prefix: string | null;
  oauth_client_id: string | null;
  scopes: Scope[];
  agent_platform: string | null;
  expires_at: Date;
  is_active: boolean;
  last_used_at: Date | null;
  created_at: Date;
};

export const KEY_COLUMNS =
  'id, organization_id, name, key_prefix, oauth_client_id, scopes, agent_platform, expires_at, is_active, last_used_at, created_at';

/**
 * A new key: generated here, stored as a bcrypt hash only. `run` opens the transaction (under RLS
 * or the service path) and calls the writer with the organization. A prefix already taken (one
 * chance in ~10⁹ per pair of keys) is retried with a fresh key. The plan's `agents` ceiling is
 * enforced by the database.
 */
export async function createApiKey(
  hash: (secret: string) => Promise<string>,
  run: (insertKey: InsertKey) => Promise<KeyRow>,
  key: NewKey,
): Promise<{ apiKey: string; row: KeyRow }> {
  for (let attempt = 0; ; attempt++) {
    const apiKey = generateApiKey();
    const keyHash = await hash(apiKey);
    try {
      const row = await run(async (tx, organizationId) => {
        const [inserted] = await tx.query<KeyRow>(
          `insert into public.agent_api_keys
             (organization_id, name, key_prefix, key_hash, scopes, agent_platform, expires_at, created_by)
           values ($1, $2, $3, $4, $5, $6, $7, $8) returning ${KEY_COLUMNS}`,
          [
            organizationId,
            key.name,
            keyPrefix(apiKey),
            keyHash,
            key.scopes,
            key.agentPlatform ?? null,
            key.expiresAt,
            key.createdBy ?? null,
          ],
        );
        return inserted as KeyRow;
      });
      return { apiKey, row };
    } catch (err) {
      const taken = (err as { constraint?: string }).constraint === 'agent_api_keys_key_prefix_key';
      if (!taken || attempt >= 2) throw err;
    }
  }
}

/** Owners and admins manage keys; everyone else is told so plainly rather than shown nothing. */
export async function requireKeyManager(deps: Pick<Deps, 'db'>, principal: Principal): Promise<string> {
  if (principal.kind !== 'user') throw forbidden('Only an organization owner or admin may manage agent keys');
  return deps.db.asPrincipal(
    principal,
    async (tx) => {
      const org = await requireCurrentOrg(tx);
      await requireOrgAdmin(tx, 'Only an organization owner or admin may manage agent keys');
      return org;
    },
    { readOnly: true },
  );
}

export async function listApiKeys(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  page: { limit: number; offset: number },
) {
  return deps.db.asPrincipal(
    principal,
    async (tx) => {
      const [count] = await tx.query<{ n: number }>('select count(*)::int as n from public.agent_api_keys');
      const keys = await tx.query<KeyRow>(
        `select ${KEY_COLUMNS} from public.agent_api_keys order by created_at desc, id limit $1 offset $2`,
        [page.limit, page.offset],
      );
      return { keys, total: count?.n ?? 0 };
    },
    { readOnly: true },
  );
}

/**
 * Self-registration: a new organization owned by the agent (no human member yet; `owner_email`
 * kept so a person can claim it) and its first key, in one transaction: a failure leaves neither.
 */
export async function registerAgent(
  deps: Pick<Deps, 'db' | 'passwords'>,
  input: {
    organizationName: string;
    ownerEmail: string;
    agentName: string;
    agentPlatform: string | null;
    scopes: string[];
  },
) {
  return createApiKey(
    (secret) => deps.passwords.hash(secret),
    (insertKey) =>
      deps.db.asPrincipal(SERVICE, async (tx) => {
        const [org] = await tx.query<{ id: string }>(
          'insert into public.organizations (name, owner_email) values ($1, $2) returning id',
          [input.organizationName, input.ownerEmail],
        );
        return insertKey(tx, (org as { id: string }).id);
      }),
    {
      name: input.agentName,
      scopes: input.scopes,
      expiresAt: keyExpiry(undefined),
      agentPlatform: input.agentPlatform,
    },
  );
}

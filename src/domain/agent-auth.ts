import { SERVICE } from '../platform/db/database.ts';
import { apiKeyExpired, apiKeyRevoked, invalidApiKey } from '../platform/errors.ts';
import { API_KEY_FORMAT, grantedScopes, keyPrefix, type Scope } from './agent-keys.ts';
import type { Deps } from './deps.ts';

export const MAX_AGENT_TOKEN_SECONDS = 3600;

type Attempt = {
  organizationId?: string | null;
  keyId?: string | null;
  prefix: string | null;
  ip: string;
  outcome: 'success' | 'failure' | 'rate_limited';
  reason: string;
};

/** Every exchange attempt is kept, with its real reason; never the key, at most its prefix. */
export async function recordAttempt(deps: Pick<Deps, 'db'>, a: Attempt): Promise<void> {
  await deps.db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      `insert into public.agent_auth_attempts (organization_id, key_id, key_prefix, ip, outcome, reason)
       values ($1, $2, $3, $4, $5, $6)`,
      [a.organizationId ?? null, a.keyId ?? null, a.prefix, a.ip, a.outcome, a.reason],
    ),
  );
}

/** The prefix of something shaped like a key, else nothing: a malformed secret is never stored. */
export const safePrefix = (apiKey: string) =>
  /^svc_ak_[A-Za-z0-9]{5}/.test(apiKey) ? keyPrefix(apiKey) : null;

type StoredKey = {
  id: string;
  organization_id: string;
  key_hash: string;
  scopes: string[];
  is_active: boolean;
  expires_at: Date;
  mcp_scopes: string[];
};

export type AgentToken = { access_token: string; expires_in: number; organization_id: string };

/**
 * The key-for-JWT exchange. The key is found by its prefix and checked with one bcrypt compare, so
 * the cost does not grow with the number of keys; an unknown prefix is compared against a dummy
 * hash so it costs the same. Revoked and expired are told only to a caller who proved the key.
 */
export async function exchangeApiKey(
  deps: Pick<Deps, 'db' | 'passwords' | 'tokens'>,
  apiKey: string,
  ip: string,
): Promise<AgentToken> {
  const prefix = safePrefix(apiKey);
  const fail = async (reason: string, key?: StoredKey) => {
    await recordAttempt(deps, {
      prefix,
      ip,
      outcome: 'failure',
      reason,
      keyId: key?.id,
      organizationId: key?.organization_id,
    });
  };
  if (!API_KEY_FORMAT.test(apiKey)) {
    await fail('malformed');
    throw invalidApiKey();
  }
  const [key] = await deps.db.asPrincipal(SERVICE, (tx) =>
    tx.query<StoredKey>(
      `select k.id, k.organization_id, k.key_hash, k.scopes, k.is_active, k.expires_at, p.mcp_scopes
         from public.agent_api_keys k
         join public.organizations o on o.id = k.organization_id
         join public.plans p on p.slug = o.plan
        where k.key_prefix = $1`,
      [keyPrefix(apiKey)],
    ),
  );
  if (!(await deps.passwords.verify(apiKey, key?.key_hash)) || !key) {
    await fail(key ? 'wrong_secret' : 'unknown_key', key);
    throw invalidApiKey();
  }
  if (!key.is_active) {
    await fail('revoked', key);
    throw apiKeyRevoked();
  }
  const secondsLeft = Math.floor((key.expires_at.getTime() - Date.now()) / 1000);
  if (secondsLeft <= 0) {
    await fail('expired', key);
    throw apiKeyExpired();
  }

  const scopes: Scope[] = grantedScopes(key.scopes, key.mcp_scopes);
  const expiresIn = Math.min(MAX_AGENT_TOKEN_SECONDS, secondsLeft); // never outlives the key
  const org = key.organization_id;
  const access_token = await deps.tokens.sign(
    {
      sub: key.id,
      aud: 'authenticated',
      role: 'authenticated',
      organization_id: org,
      org_role: 'agent',
      agent_scopes: scopes,
      app_metadata: { organization_id: org, org_role: 'agent', agent_scopes: scopes },
    },
    expiresIn,
  );
  await deps.db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      `with used as (update public.agent_api_keys set last_used_at = now() where id = $1 returning id, organization_id)
       insert into public.agent_auth_attempts (organization_id, key_id, key_prefix, ip, outcome, reason)
       select organization_id, id, $2, $3, 'success', 'ok' from used`,
      [key.id, prefix, ip],
    ),
  );
  return { access_token, expires_in: expiresIn, organization_id: org };
}

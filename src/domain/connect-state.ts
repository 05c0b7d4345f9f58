import { createHash, randomBytes } from 'node:crypto';
import type { Principal } from '../platform/db/database.ts';
import { AppError, forbidden, noOrganization } from '../platform/errors.ts';
import type { Provider } from './connected-accounts.ts';
import type { Deps } from './deps.ts';

// The `state` of a provider sign-in that connects an account (migrations/0033_connect_states.sql).
// A person starts a sign-in in their current organization; the provider sends the browser back to
// the dashboard with `state`, and the dashboard hands it to the service with the same person's
// token. Only that person, still an owner or admin of that organization, can use it, once, before
// it expires. What a sign-in found between two steps (tokens, the Pages to pick from) rides along
// sealed.

/** How long a person has to finish a sign-in at the provider, or to pick what to connect. */
export const CONNECT_STATE_TTL_SECONDS = 15 * 60;

const hashOf = (state: string) => createHash('sha256').update(state).digest('hex');
const sealContext = (stateHash: string) => `connect_states:${stateHash}`;

export const invalidConnectState = () =>
  new AppError(
    400,
    'invalid_state',
    'This sign-in link has expired or was already used: start connecting the account again',
  );

/**
 * A new single-use state for a sign-in with `provider`, bound to the caller (an owner or admin of
 * their current organization); `data` is kept sealed until the state is taken.
 */
export async function startConnect(
  deps: Pick<Deps, 'db' | 'secrets'>,
  principal: Principal,
  provider: Provider,
  data: unknown = null,
): Promise<string> {
  const state = randomBytes(32).toString('base64url');
  const hash = hashOf(state);
  const sealed = data === null ? null : deps.secrets.seal(JSON.stringify(data), sealContext(hash));
  // A sign-in is a person's: an agent's key cannot follow a browser through the provider.
  if (principal.kind !== 'user') throw forbidden('Only a signed-in person can connect accounts this way');
  const me = await callerOf(deps, principal);
  if (!me?.org) throw noOrganization();
  if (!me.admin || !me.user) throw forbidden('Only owners and admins may connect accounts');
  // Owner rights, after the caller's check: no API role may write this table.
  await deps.db.query(
    `insert into app.connect_states (state_hash, organization_id, user_id, provider, data_encrypted, expires_at)
     values ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [hash, me.org, me.user, provider, sealed, CONNECT_STATE_TTL_SECONDS],
  );
  return state;
}

/**
 * Uses `state` up: the data it was started with, when the caller is the person who started it,
 * acting in the same organization and still an owner or admin there. Anything else — unknown,
 * expired, used, another person's or organization's, another provider's — is 400 invalid_state,
 * and a state someone else presented is spent all the same (it leaked: it must not work later).
 */
export async function takeConnect<T = unknown>(
  deps: Pick<Deps, 'db' | 'secrets'>,
  principal: Principal,
  provider: Provider,
  state: string,
): Promise<T> {
  const hash = hashOf(state);
  const [row] = await deps.db.query<{
    organization_id: string;
    user_id: string;
    data_encrypted: string | null;
  }>(
    `update app.connect_states set used_at = now()
      where state_hash = $1 and provider = $2 and used_at is null and expires_at > now()
      returning organization_id, user_id, data_encrypted`,
    [hash, provider],
  );
  if (!row) throw invalidConnectState();
  const me = await callerOf(deps, principal);
  if (!me?.admin || me.org !== row.organization_id || me.user !== row.user_id) throw invalidConnectState();
  return (
    row.data_encrypted === null ? null : JSON.parse(deps.secrets.open(row.data_encrypted, sealContext(hash)))
  ) as T;
}

/** Who is asking: their current organization, their user id, whether they are an owner or admin there. */
async function callerOf(deps: Pick<Deps, 'db'>, principal: Principal) {
  const [me] = await deps.db.asPrincipal(
    principal,
    (tx) =>
      tx.query<{ org: string | null; user: string | null; admin: boolean }>(
        'select app.current_org_id() as org, auth.uid() as user, app.is_org_admin() as admin',
      ),
    { readOnly: true },
  );
  return me;
}

/** Forgets states past their expiry (the purge job calls it). */
export async function purgeConnectStates(deps: Pick<Deps, 'db'>): Promise<number> {
  const rows = await deps.db.query(
    `delete from app.connect_states where expires_at < now() - interval '1 day' returning id`,
  );
  return rows.length;
}

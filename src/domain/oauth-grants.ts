import { createHash } from 'node:crypto';
import { type Queryable, SERVICE } from '../platform/db/database.ts';
import { hashOpaqueToken, newOpaqueToken } from '../platform/opaque-token.ts';
import { MAX_AGENT_TOKEN_SECONDS, recordAttempt } from './agent-auth.ts';
import { grantedScopes, MAX_KEY_DAYS, SCOPES, type Scope } from './agent-keys.ts';
import type { Deps } from './deps.ts';
import { type OAuthClient, oauthError } from './oauth-clients.ts';

// Grants: a person let an MCP client act in one organization (issue 31). A grant is a row of
// agent_api_keys without a secret (migrations/0054), so everything a key is it is too: an agent
// seat of the plan, listed and revoked by owners and admins, its tokens refused once it is revoked.
// The client holds an authorization code for a moment, then access tokens (agent JWTs, at most an
// hour, audience the MCP endpoint) and a refresh token that rotates at each use.

/** How long an authorization code may wait for its exchange. */
export const CODE_SECONDS = 300;
/** How long a grant lasts without being given again: a key's longest life. */
export const GRANT_DAYS = MAX_KEY_DAYS;

const DAY_MS = 24 * 3600 * 1000;

/** What an authorization request asks for, checked (authorize and the consent page's decision). */
export type AuthorizationRequest = {
  client: OAuthClient;
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
  scopes: Scope[];
  resource: string;
};

/** The scopes a space-separated `scope` asks for; all of them (capped at consent) when none. */
export function requestedScopes(scope: string | undefined): Scope[] {
  if (!scope?.trim()) return [...SCOPES];
  const asked = scope.trim().split(/\s+/);
  const unknown = asked.find((s) => !SCOPES.includes(s as Scope));
  if (unknown)
    throw oauthError(400, 'invalid_scope', `Unknown scope ${unknown}: the scopes are ${SCOPES.join(', ')}`);
  return SCOPES.filter((s) => asked.includes(s));
}

/** An organization the person may grant into: they are its owner or admin. */
export type GrantableOrganization = {
  id: string;
  name: string;
  role: 'owner' | 'admin';
  plan: string;
  plan_name: string;
  /** What the plan lets agents do: the most a grant into it can give. */
  mcp_scopes: Scope[];
};

/** The organizations `userId` owns or administers, with what their plans let agents do. */
export async function grantableOrganizations(deps: Pick<Deps, 'db'>, userId: string) {
  return deps.db.asPrincipal(SERVICE, (tx) =>
    tx.query<GrantableOrganization>(
      `select o.id, o.name, m.role, p.slug as plan, p.name as plan_name, p.mcp_scopes
         from public.organization_members m
         join public.organizations o on o.id = m.organization_id
         join public.plans p on p.slug = o.plan
        where m.user_id = $1 and m.role in ('owner', 'admin')
        order by o.name, o.id`,
      [userId],
    ),
  );
}

/**
 * The person's consent: the grant (one per client and organization: giving it again replaces its
 * scopes and renews it) and a code for the client. Only an owner or admin of the organization may;
 * the scopes are capped by the plan; a new grant takes an agent seat (the database refuses one
 * over the plan's `agents`).
 */
export async function consent(
  deps: Pick<Deps, 'db'>,
  userId: string,
  request: AuthorizationRequest,
  organizationId: string,
  scopes: Scope[],
): Promise<{ code: string; grantId: string }> {
  const org = (await grantableOrganizations(deps, userId)).find((o) => o.id === organizationId);
  if (!org)
    throw oauthError(403, 'forbidden', 'Only an owner or admin of the organization may connect an app to it');
  const allowed = scopes.filter((s) => org.mcp_scopes.includes(s) && request.scopes.includes(s));
  if (allowed.length === 0)
    throw oauthError(
      400,
      'invalid_scope',
      `Choose at least one of ${org.mcp_scopes.filter((s) => request.scopes.includes(s)).join(', ') || 'the plan’s scopes'}`,
    );
  const top = [SCOPES.filter((s) => allowed.includes(s)).at(-1) as Scope];
  const expiresAt = new Date(Date.now() + GRANT_DAYS * DAY_MS);
  const { token: code, hash } = newOpaqueToken();
  const grantId = await deps.db.asPrincipal(SERVICE, async (tx) => {
    const [existing] = await tx.query<{ id: string }>(
      `update public.agent_api_keys set scopes = $3, oauth_client_name = $4, expires_at = $5
        where organization_id = $1 and oauth_client_id = $2 and is_active and expires_at > now()
        returning id`,
      [organizationId, request.client.client_id, top, request.client.client_name, expiresAt],
    );
    const id =
      existing?.id ??
      (
        await tx.query<{ id: string }>(
          `insert into public.agent_api_keys
             (organization_id, name, scopes, expires_at, created_by, oauth_client_id, oauth_client_name, agent_platform)
           values ($1, $2, $3, $4, $5, $6, $2, 'oauth') returning id`,
          [organizationId, request.client.client_name, top, expiresAt, userId, request.client.client_id],
        )
      )[0]?.id;
    await tx.query(
      `insert into app.oauth_codes
         (code_hash, organization_id, grant_id, client_id, redirect_uri, code_challenge, resource, scopes, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(secs => $9))`,
      [
        hash,
        organizationId,
        id,
        request.client.client_id,
        request.redirectUri,
        request.codeChallenge,
        request.resource,
        allowed,
        CODE_SECONDS,
      ],
    );
    await tx.query('update app.oauth_clients set used_at = now() where client_id = $1', [
      request.client.client_id,
    ]);
    return id as string;
  });
  return { code, grantId };
}

export type TokenAnswer = {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
};

type Grant = {
  id: string;
  organization_id: string;
  scopes: string[];
  oauth_client_id: string;
  mcp_scopes: string[];
  seconds_left: number;
  is_active: boolean;
};

async function liveGrant(tx: Queryable, organizationId: string, grantId: string) {
  const [g] = await tx.query<Grant>(
    `select k.id, k.organization_id, k.scopes, k.oauth_client_id, p.mcp_scopes, k.is_active,
            floor(extract(epoch from k.expires_at - now()))::int as seconds_left
       from public.agent_api_keys k
       join public.organizations o on o.id = k.organization_id
       join public.plans p on p.slug = o.plan
      where k.organization_id = $1 and k.id = $2 and k.oauth_client_id is not null`,
    [organizationId, grantId],
  );
  return g?.is_active && g.seconds_left > 0 ? g : undefined;
}

/**
 * An agent JWT for the grant (spec section 2.5's claims, like agent-auth's) for `resource`, and a
 * new refresh token (child of `parent`). The scopes are the grant's capped by the plan today.
 */
async function issue(
  deps: Pick<Deps, 'tokens'>,
  tx: Queryable,
  grant: Grant,
  resource: string,
  parent: string | null,
): Promise<TokenAnswer> {
  const scopes = grantedScopes(grant.scopes, grant.mcp_scopes);
  const expiresIn = Math.min(MAX_AGENT_TOKEN_SECONDS, grant.seconds_left);
  const org = grant.organization_id;
  const access_token = await deps.tokens.sign(
    {
      sub: grant.id,
      aud: resource,
      role: 'authenticated',
      organization_id: org,
      org_role: 'agent',
      agent_scopes: scopes,
      app_metadata: { organization_id: org, org_role: 'agent', agent_scopes: scopes },
      client_id: grant.oauth_client_id,
      scope: scopes.join(' '),
    },
    expiresIn,
  );
  const refresh = newOpaqueToken();
  await tx.query(
    `insert into app.oauth_refresh_tokens (token_hash, organization_id, grant_id, client_id, resource, parent_hash)
     values ($1, $2, $3, $4, $5, $6)`,
    [refresh.hash, org, grant.id, grant.oauth_client_id, resource, parent],
  );
  await tx.query(
    'update public.agent_api_keys set last_used_at = now() where organization_id = $1 and id = $2',
    [org, grant.id],
  );
  return {
    access_token,
    token_type: 'Bearer',
    expires_in: expiresIn,
    refresh_token: refresh.token,
    scope: scopes.join(' '),
  };
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

type Logged = { ip: string };
type GrantRef = { id: string; organization_id: string };
type Outcome =
  | { answer: TokenAnswer; grant: GrantRef }
  | { reason: string; message: string; grant?: GrantRef };

const fail = async (
  deps: Pick<Deps, 'db'>,
  at: Logged,
  reason: string,
  grant?: { id: string; organization_id: string },
) => {
  await recordAttempt(deps, {
    prefix: null,
    ip: at.ip,
    outcome: 'failure',
    reason,
    keyId: grant?.id,
    organizationId: grant?.organization_id,
  });
};

const succeed = (
  deps: Pick<Deps, 'db'>,
  at: Logged,
  reason: string,
  grant: { id: string; organization_id: string },
) =>
  recordAttempt(deps, {
    prefix: null,
    ip: at.ip,
    outcome: 'success',
    reason,
    keyId: grant.id,
    organizationId: grant.organization_id,
  });

/** grant_type=authorization_code: the code once, its client, redirect URI, PKCE verifier and resource. */
export async function exchangeCode(
  deps: Pick<Deps, 'db' | 'tokens'>,
  input: { code: string; codeVerifier: string; redirectUri: string; clientId: string; resource?: string },
  at: Logged,
): Promise<TokenAnswer> {
  const outcome = await deps.db.asPrincipal(SERVICE, async (tx): Promise<Outcome> => {
    const [code] = await tx.query<{
      organization_id: string;
      grant_id: string;
      client_id: string;
      redirect_uri: string;
      code_challenge: string;
      resource: string;
    }>(
      `update app.oauth_codes set used_at = now()
        where code_hash = $1 and used_at is null and expires_at > now()
        returning organization_id, grant_id, client_id, redirect_uri, code_challenge, resource`,
      [hashOpaqueToken(input.code)],
    );
    if (!code) return { reason: 'oauth_code_unknown', message: 'The code is unknown, used or expired' };
    const grant = { id: code.grant_id, organization_id: code.organization_id };
    if (code.client_id !== input.clientId)
      return { reason: 'oauth_code_client', message: 'The code was issued to another client', grant };
    if (code.redirect_uri !== input.redirectUri)
      return {
        reason: 'oauth_code_redirect',
        message: 'redirect_uri differs from the authorization request’s',
        grant,
      };
    if (s256(input.codeVerifier) !== code.code_challenge)
      return { reason: 'oauth_pkce', message: 'code_verifier does not match the code_challenge', grant };
    if (input.resource !== undefined && input.resource !== code.resource)
      return {
        reason: 'oauth_resource',
        message: 'resource differs from the authorization request’s',
        grant,
      };
    const live = await liveGrant(tx, code.organization_id, code.grant_id);
    if (!live) return { reason: 'oauth_grant_revoked', message: 'The grant was revoked', grant };
    return { answer: await issue(deps, tx, live, code.resource, null), grant };
  });
  if ('answer' in outcome) {
    await succeed(deps, at, 'oauth_code', outcome.grant);
    return outcome.answer;
  }
  await fail(deps, at, outcome.reason, outcome.grant);
  throw oauthError(400, 'invalid_grant', outcome.message);
}

/**
 * grant_type=refresh_token, rotated as /auth/v1 rotates (src/auth/refresh-token.ts): each use
 * revokes the token and issues its child; a revoked token whose child is still unused stands for
 * it within the reuse interval (a client that lost the answer); any other reuse is a replay, and
 * the whole grant is revoked, which ends its access tokens too.
 */
export async function rotateRefresh(
  deps: Pick<Deps, 'db' | 'tokens'>,
  input: { refreshToken: string; clientId: string; resource?: string },
  reuseIntervalSeconds: number,
  at: Logged,
  revoked: () => void = () => {},
): Promise<TokenAnswer> {
  const hash = hashOpaqueToken(input.refreshToken);
  const outcome = await deps.db.asPrincipal(SERVICE, async (tx): Promise<Outcome> => {
    const [rt] = await tx.query<{
      organization_id: string;
      grant_id: string;
      client_id: string;
      resource: string;
      revoked: boolean;
      age_seconds: number;
      active_child: string | null;
    }>(
      `select t.organization_id, t.grant_id, t.client_id, t.resource, t.revoked,
              extract(epoch from now() - t.updated_at)::float8 as age_seconds,
              (select c.token_hash from app.oauth_refresh_tokens c
                where c.parent_hash = t.token_hash and not c.revoked limit 1) as active_child
         from app.oauth_refresh_tokens t where t.token_hash = $1 for update`,
      [hash],
    );
    if (!rt) return { reason: 'oauth_refresh_unknown', message: 'The refresh token is unknown' };
    const grant = { id: rt.grant_id, organization_id: rt.organization_id };
    if (rt.client_id !== input.clientId)
      return {
        reason: 'oauth_refresh_client',
        message: 'The refresh token was issued to another client',
        grant,
      };
    if (input.resource !== undefined && input.resource !== rt.resource)
      return { reason: 'oauth_resource', message: 'resource differs from the grant’s', grant };
    let parent = hash;
    if (rt.revoked && rt.active_child && rt.age_seconds <= reuseIntervalSeconds) parent = rt.active_child;
    else if (rt.revoked) {
      await tx.query(
        'update public.agent_api_keys set is_active = false where organization_id = $1 and id = $2 and is_active',
        [rt.organization_id, rt.grant_id],
      );
      await tx.query('update app.oauth_refresh_tokens set revoked = true where grant_id = $1', [rt.grant_id]);
      return {
        reason: 'oauth_refresh_reused',
        message: 'The refresh token was already used: the grant is revoked, sign in again',
        grant,
      };
    }
    const live = await liveGrant(tx, rt.organization_id, rt.grant_id);
    if (!live)
      return { reason: 'oauth_grant_revoked', message: 'The grant was revoked: sign in again', grant };
    await tx.query(
      'update app.oauth_refresh_tokens set revoked = true, updated_at = now() where token_hash = $1',
      [parent],
    );
    return { answer: await issue(deps, tx, live, rt.resource, parent), grant };
  });
  if ('answer' in outcome) {
    await succeed(deps, at, 'oauth_refresh', outcome.grant);
    return outcome.answer;
  }
  // This process's key checks forget at once; the others hear the revocation's NOTIFY.
  if (outcome.reason === 'oauth_refresh_reused') revoked();
  await fail(deps, at, outcome.reason, outcome.grant);
  throw oauthError(400, 'invalid_grant', outcome.message);
}

/**
 * RFC 7009: a refresh token (or one of this service's access tokens, `grant` read from its
 * verified claims) ends the whole grant: its refresh tokens, and its access tokens at their next
 * request (the key-revocation notice). Unknown tokens and other clients' are ignored, as the RFC says.
 */
export async function revokeGrant(
  deps: Pick<Deps, 'db'>,
  input: { refreshToken?: string; grant?: { id: string; organization_id: string }; clientId: string },
  at: Logged,
  revoked: () => void = () => {},
): Promise<void> {
  const grant = await deps.db.asPrincipal(SERVICE, async (tx) => {
    let g = input.grant;
    if (input.refreshToken) {
      const [rt] = await tx.query<{ grant_id: string; organization_id: string }>(
        'select grant_id, organization_id from app.oauth_refresh_tokens where token_hash = $1 and client_id = $2',
        [hashOpaqueToken(input.refreshToken), input.clientId],
      );
      g = rt && { id: rt.grant_id, organization_id: rt.organization_id };
    }
    if (!g) return undefined;
    const [done] = await tx.query<{ id: string }>(
      `update public.agent_api_keys set is_active = false
        where organization_id = $1 and id = $2 and oauth_client_id = $3 and is_active returning id`,
      [g.organization_id, g.id, input.clientId],
    );
    if (done)
      await tx.query('update app.oauth_refresh_tokens set revoked = true where grant_id = $1', [g.id]);
    return done ? g : undefined;
  });
  if (!grant) return;
  revoked();
  await succeed(deps, at, 'oauth_revoked', grant);
}

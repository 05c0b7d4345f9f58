import type { Context } from 'hono';
import { recordAttempt } from '../domain/agent-auth.ts';
import { SCOPES, type Scope } from '../domain/agent-keys.ts';
import { findClient, oauthError, redirectMatches, registerClient } from '../domain/oauth-clients.ts';
import {
  type AuthorizationRequest,
  consent,
  exchangeCode,
  grantableOrganizations,
  requestedScopes,
  revokeGrant,
  rotateRefresh,
} from '../domain/oauth-grants.ts';
import { MCP_PATHS, resourceUrl } from '../mcp/protected-resource.ts';
import { toAppError } from '../platform/errors.ts';
import { principalOf, requireUser } from '../platform/http/authenticate.ts';
import { addressKey } from '../platform/http/client-ip.ts';
import type { AppEnv } from '../platform/http/env.ts';
import { newRouter } from '../platform/http/openapi.ts';
import { fetchPublicJson } from '../platform/public-json-fetch.ts';
import type { Limiter } from '../platform/rate-limit.ts';
import { rateLimited } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';
import { authorizationServerMetadata, authorizationServerMetadataPath, OAUTH_PATHS } from './metadata.ts';
import { describeOAuth } from './openapi.ts';

// The OAuth 2.1 authorization server of the MCP endpoint (issue 31, docs/mcp-oauth.md): metadata,
// registration, authorize (to the dashboard's consent page), the consent page's two calls, token
// and revocation. The rules are src/domain/oauth-*.ts; this file reads requests and answers in
// OAuth's shapes (RFC 6749 section 5.2: `error`, `error_description`).

/** What each scope allows, as the consent page shows it. */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  read: 'Read contacts, orders, inventory, conversations, posts and reports',
  write: 'Also create and change them: contacts, orders, stock, messages and posts',
  admin: 'Also the admin tools (on plans that offer them)',
};

/** An error for a redirect (RFC 6749 section 4.1.2.1): the client's URI with error and state. */
class RedirectableError extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
  ) {
    super(description);
  }
}

type Params = Record<string, string | undefined>;

const one = (v: unknown) => (typeof v === 'string' ? v : undefined);

export function oauthRoutes(s: Services) {
  const app = newRouter();
  const issuer = s.publicUrl;
  const resources = new Set(MCP_PATHS.map((p) => resourceUrl(s.publicUrl, p)));
  const fetchDocument = (url: string) =>
    fetchPublicJson(url, {
      allowHosts: s.config.mediaFetch.allowHosts,
      timeoutMs: 5000,
      maxBytes: 64 * 1024,
    });

  const limit = async (limiter: Limiter, c: Context<AppEnv>, what: string) => {
    const ip = c.get('clientIp');
    const hit = await limiter.hit(addressKey(ip));
    if (hit.allowed) return;
    await recordAttempt(s, { prefix: null, ip, outcome: 'rate_limited', reason: `oauth_${what}` });
    throw rateLimited(hit.retryAfterSeconds, `OAuth ${what} requests from this address`);
  };

  /**
   * An authorization request checked in RFC 6749's order: the client and its redirect URI first
   * (wrong ones are told to the person, never redirected to), then the rest (told to the client
   * at its redirect URI).
   */
  const check = async (p: Params): Promise<AuthorizationRequest> => {
    if (!p.client_id) throw oauthError(400, 'invalid_request', 'client_id is required');
    const client = await findClient(s, p.client_id, fetchDocument);
    const redirectUri = p.redirect_uri;
    if (!redirectUri || !redirectMatches(client.redirect_uris, redirectUri))
      throw oauthError(400, 'invalid_request', 'redirect_uri is not one of the client’s redirect URIs');
    if (p.response_type !== 'code')
      throw new RedirectableError('unsupported_response_type', 'response_type must be code');
    if (!p.code_challenge || p.code_challenge_method !== 'S256')
      throw new RedirectableError(
        'invalid_request',
        'PKCE is required: code_challenge with code_challenge_method S256',
      );
    if (!/^[A-Za-z0-9_-]{43}$/.test(p.code_challenge))
      throw new RedirectableError(
        'invalid_request',
        'code_challenge must be the base64url SHA-256 of the verifier',
      );
    if (!p.resource)
      throw new RedirectableError('invalid_target', `resource is required: ${[...resources].join(' or ')}`);
    if (!resources.has(p.resource))
      throw new RedirectableError(
        'invalid_target',
        `resource must be this service's MCP endpoint: ${[...resources].join(' or ')}`,
      );
    let scopes: Scope[];
    try {
      scopes = requestedScopes(p.scope);
    } catch (err) {
      throw new RedirectableError('invalid_scope', (err as Error).message);
    }
    return {
      client,
      redirectUri,
      codeChallenge: p.code_challenge,
      state: p.state,
      scopes,
      resource: p.resource,
    };
  };

  const redirectWith = (uri: string, fields: Record<string, string | undefined>) => {
    const url = new URL(uri);
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) url.searchParams.set(k, v);
    return url.toString();
  };

  describeOAuth(app, authorizationServerMetadataPath(issuer));
  app.get(authorizationServerMetadataPath(issuer), (c) => {
    c.header('cache-control', 'public, max-age=3600');
    return c.json(authorizationServerMetadata(issuer), 200);
  });

  app.post(OAUTH_PATHS.register, async (c) => {
    await limit(s.limits.oauthRegisterPerIp, c, 'registration');
    const body = await c.req.json().catch(() => {
      throw oauthError(400, 'invalid_client_metadata', 'The body must be a JSON object');
    });
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw oauthError(400, 'invalid_client_metadata', 'The body must be a JSON object');
    return c.json(await registerClient(s, body, c.get('clientIp')), 201);
  });

  app.get(OAUTH_PATHS.authorize, async (c) => {
    await limit(s.limits.oauthPerIp, c, 'authorize');
    const p = c.req.query();
    try {
      await check(p);
    } catch (err) {
      if (!(err instanceof RedirectableError)) throw err;
      return c.redirect(
        redirectWith(p.redirect_uri as string, {
          error: err.code,
          error_description: err.description,
          state: p.state,
          iss: issuer,
        }),
        302,
      );
    }
    // The person decides on the dashboard's page, which sends the same parameters back.
    const url = new URL(c.req.url);
    return c.redirect(`${s.publicUrl}${OAUTH_PATHS.consent}${url.search}`, 302);
  });

  /** The consent page's calls: the person's token, the authorization request's parameters. */
  const consentCall = async (c: Context<AppEnv>) => {
    const user = requireUser(await principalOf(s, c.req.header('authorization'), true));
    const body = (await c.req.json().catch(() => ({}))) as Record<string, unknown>;
    const params = Object.fromEntries(
      Object.entries((body.params ?? {}) as object).map(([k, v]) => [k, one(v)]),
    );
    return { user, body, params };
  };

  app.post(`${OAUTH_PATHS.authorize}/describe`, async (c) => {
    const { user, params } = await consentCall(c);
    let request: AuthorizationRequest;
    try {
      request = await check(params);
    } catch (err) {
      if (!(err instanceof RedirectableError)) throw err;
      return c.json(
        {
          error: err.code,
          error_description: err.description,
          redirect_to: redirectWith(params.redirect_uri as string, {
            error: err.code,
            error_description: err.description,
            state: params.state,
            iss: issuer,
          }),
        },
        400,
      );
    }
    const redirect = new URL(request.redirectUri);
    return c.json(
      {
        client_id: request.client.client_id,
        client_name: request.client.client_name,
        redirect_host:
          redirect.protocol === 'http:' || redirect.protocol === 'https:' ? redirect.host : redirect.protocol,
        resource: request.resource,
        scopes_requested: request.scopes,
        scopes: SCOPES.map((scope) => ({ scope, allows: SCOPE_DESCRIPTIONS[scope] })),
        organizations: await grantableOrganizations(s, user.userId),
      },
      200,
    );
  });

  app.post(`${OAUTH_PATHS.authorize}/decision`, async (c) => {
    await limit(s.limits.oauthPerIp, c, 'authorize');
    const { user, body, params } = await consentCall(c);
    const request = await check(params).catch((err) => {
      if (err instanceof RedirectableError) throw oauthError(400, err.code, err.description);
      throw err;
    });
    const ip = c.get('clientIp');
    if (body.approve !== true) {
      await recordAttempt(s, { prefix: null, ip, outcome: 'failure', reason: 'oauth_denied' });
      return c.json(
        {
          redirect_to: redirectWith(request.redirectUri, {
            error: 'access_denied',
            error_description: 'The person did not allow access',
            state: request.state,
            iss: issuer,
          }),
        },
        200,
      );
    }
    const organizationId = one(body.organization_id);
    const scopes = Array.isArray(body.scopes)
      ? body.scopes.filter((x): x is Scope => SCOPES.includes(x))
      : [];
    if (!organizationId) throw oauthError(400, 'invalid_request', 'organization_id is required');
    const { code, grantId } = await consent(s, user.userId, request, organizationId, scopes);
    await recordAttempt(s, {
      prefix: null,
      ip,
      outcome: 'success',
      reason: 'oauth_consent',
      keyId: grantId,
      organizationId,
    });
    return c.json(
      { redirect_to: redirectWith(request.redirectUri, { code, state: request.state, iss: issuer }) },
      200,
    );
  });

  /** A form body (RFC 6749 says so), or JSON from lenient clients. */
  const formOf = async (c: Context<AppEnv>): Promise<Params> => {
    const type = c.req.header('content-type') ?? '';
    if (type.includes('application/json')) {
      const body = (await c.req.json().catch(() => ({}))) as Record<string, unknown>;
      return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, one(v)]));
    }
    const form = await c.req.parseBody().catch(() => ({}));
    return Object.fromEntries(Object.entries(form).map(([k, v]) => [k, one(v)]));
  };

  app.post(OAUTH_PATHS.token, async (c) => {
    await limit(s.limits.oauthPerIp, c, 'token');
    const p = await formOf(c);
    const at = { ip: c.get('clientIp') };
    c.header('cache-control', 'no-store');
    if (!p.client_id) throw oauthError(400, 'invalid_request', 'client_id is required');
    if (p.grant_type === 'authorization_code') {
      if (!p.code || !p.code_verifier || !p.redirect_uri)
        throw oauthError(400, 'invalid_request', 'code, code_verifier and redirect_uri are required');
      const answer = await exchangeCode(
        s,
        {
          code: p.code,
          codeVerifier: p.code_verifier,
          redirectUri: p.redirect_uri,
          clientId: p.client_id,
          resource: p.resource,
        },
        at,
      );
      return c.json(answer, 200);
    }
    if (p.grant_type === 'refresh_token') {
      if (!p.refresh_token) throw oauthError(400, 'invalid_request', 'refresh_token is required');
      const answer = await rotateRefresh(
        s,
        { refreshToken: p.refresh_token, clientId: p.client_id, resource: p.resource },
        s.config.refreshTokenReuseIntervalSeconds,
        at,
        s.keyCheck.forgetAll,
      );
      return c.json(answer, 200);
    }
    throw oauthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  });

  app.post(OAUTH_PATHS.revoke, async (c) => {
    await limit(s.limits.oauthPerIp, c, 'revoke');
    const p = await formOf(c);
    if (!p.token || !p.client_id)
      throw oauthError(400, 'invalid_request', 'token and client_id are required');
    let grant: { id: string; organization_id: string } | undefined;
    if (p.token.split('.').length === 3) {
      const claims = await s.tokens.verify(p.token).catch(() => undefined);
      if (claims && claims.client_id === p.client_id && typeof claims.sub === 'string')
        grant = { id: claims.sub, organization_id: String(claims.organization_id) };
    }
    await revokeGrant(
      s,
      { refreshToken: grant ? undefined : p.token, grant, clientId: p.client_id },
      { ip: c.get('clientIp') },
      s.keyCheck.forgetAll,
    );
    return c.body(null, 200);
  });

  // OAuth's error shape beside the service's own fields.
  app.onError((err, c) => {
    const e = toAppError(err);
    if (e.status >= 500) throw err;
    for (const [k, v] of Object.entries(e.headers)) c.header(k, v);
    return c.json(
      { error: e.code, error_description: e.message, message: e.message, details: e.details },
      e.status as 400,
    );
  });
  return app;
}

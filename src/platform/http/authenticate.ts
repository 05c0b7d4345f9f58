import type { Context, MiddlewareHandler } from 'hono';
import type { Principal } from '../db/database.ts';
import { AppError, forbidden, unauthorized } from '../errors.ts';
import { type Claims, TokenError, type Tokens } from '../jwt.ts';
import { perObject } from '../per-object.ts';
import type { AppEnv } from './env.ts';

/**
 * The principal a verified JWT stands for, as PostgREST would derive the database role; one per
 * token's claims (the token cache keeps one claims object per token, platform/jwt.ts).
 */
export const principalFromClaims = perObject(derivePrincipal);

function derivePrincipal(claims: Claims): Principal {
  if (claims.role === 'service_role') return { kind: 'service', claims };
  if (claims.role === 'anon') return { kind: 'anon', claims };
  if (claims.role === 'authenticated' && typeof claims.sub === 'string') {
    return claims.org_role === 'agent'
      ? { kind: 'agent', keyId: claims.sub, claims }
      : { kind: 'user', userId: claims.sub, claims };
  }
  throw unauthorized('The token does not name a known role');
}

/** The token of an `Authorization: Bearer <token>` header; null without one. */
export function bearerFrom(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m?.[1]) throw unauthorized('The Authorization header must be "Bearer <token>"');
  return m[1];
}

export const bearerToken = (c: Context) => bearerFrom(c.req.header('authorization'));

/** Where agents exchange an API key for a JWT (spec 5.4). */
export const agentAuthUrl = (publicUrl: string) => `${publicUrl}/functions/v1/agent-auth`;

/**
 * RFC 6750 section 3: a refused bearer token is named in WWW-Authenticate, so a client (or a
 * person reading the headers) learns what to do without parsing the body.
 */
export function bearerChallenge(description: string, realm?: string): string {
  // A quoted-string may not carry '"' or '\'.
  const quoted = description.replace(/["\\]/g, "'");
  return `Bearer ${realm ? `realm="${realm}", ` : ''}error="invalid_token", error_description="${quoted}"`;
}

/**
 * An agent's raw `svc_ak_…` key sent where a JWT belongs, answered the same way on every
 * surface (/rest/v1, functions, the MCP server): 401 with the exchange endpoint in the body and
 * in the challenge. Returns nothing for any other token.
 */
export function rawApiKeyRefusal(token: string, publicUrl: string): AppError | null {
  if (!token.startsWith('svc_ak_')) return null;
  const endpoint = agentAuthUrl(publicUrl);
  const message = `This is a raw API key: exchange it for an agent JWT at agent-auth (POST ${endpoint}) and send that token instead`;
  return new AppError(
    401,
    'unauthorized',
    message,
    { auth_endpoint: endpoint },
    {},
    { 'WWW-Authenticate': bearerChallenge(message) },
  );
}

export async function verifyBearer(tokens: Tokens, token: string): Promise<Claims> {
  try {
    return await tokens.verify(token);
  } catch (err) {
    if (err instanceof TokenError && err.reason === 'expired') {
      throw new AppError(
        401,
        'token_expired',
        'The token has expired; sign in again (agents: call agent-auth again)',
      );
    }
    throw unauthorized('The bearer token is malformed or badly signed');
  }
}

/** `apikey` must be one of this service's API keys (roles anon or service_role), as the gateway requires. */
export async function checkApiKey(tokens: Tokens, key: string | undefined): Promise<void> {
  if (!key) throw unauthorized('No API key found in request: send the anon key in the apikey header');
  let claims: Claims;
  try {
    claims = await tokens.verify(key);
  } catch {
    throw unauthorized('Invalid API key');
  }
  if (!isApiKey(claims)) throw unauthorized('Invalid API key');
}

/** This service's API keys are tokens of the anon or the service role. */
const isApiKey = (claims: Claims) => claims.role === 'anon' || claims.role === 'service_role';

export const requireApiKey =
  (tokens: Tokens): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    await checkApiKey(tokens, c.req.header('apikey'));
    await next();
  };

const ANON: Principal = { kind: 'anon', claims: { role: 'anon' } };

/**
 * The principal of an Authorization header's bearer token. Without one the caller is anonymous,
 * or refused when `required`. A bearer that is present but bad is always refused.
 */
export async function principalOf(
  s: { tokens: Tokens; publicUrl: string },
  authorization: string | undefined,
  required: boolean,
): Promise<Principal> {
  const token = bearerFrom(authorization);
  if (!token) {
    if (required) throw unauthorized();
    return ANON;
  }
  const rawKey = rawApiKeyRefusal(token, s.publicUrl);
  if (rawKey) throw rawKey;
  return principalFromClaims(await verifyBearer(s.tokens, token));
}

/** The caller of a request with an API key and perhaps a bearer token (anonymous without one). */
export async function callerOf(
  s: { tokens: Tokens; publicUrl: string },
  apikey: string | undefined,
  authorization: string | undefined,
): Promise<Principal> {
  await checkApiKey(s.tokens, apikey);
  return principalOf(s, authorization, false);
}

/**
 * callerOf for a request whose API key and bearer token were both verified before (nearly
 * every request: clients send the same tokens again and again), found without a promise;
 * undefined when either is new, expired or refused, and then callerOf decides and says why.
 */
export function knownCaller(
  tokens: Tokens,
  apikey: string | undefined,
  authorization: string | undefined,
): Principal | undefined {
  try {
    const key = apikey ? tokens.known(apikey) : undefined;
    if (!key || !isApiKey(key)) return undefined;
    if (!authorization) return ANON;
    // Only the plain form "Bearer <token>" here, found without a regular expression over a
    // token of hundreds of characters; whatever else bearerFrom accepts goes the long way.
    if (!authorization.startsWith('Bearer ')) return undefined;
    const claims = tokens.known(authorization.slice(7));
    return claims && principalFromClaims(claims);
  } catch {
    return undefined;
  }
}

/** Sets `principal` from the bearer token (principalOf). */
export const authenticate =
  (s: { tokens: Tokens; publicUrl: string }, opts: { required: boolean }): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    c.set('principal', await principalOf(s, c.req.header('authorization'), opts.required));
    await next();
  };

export function requireUser(principal: Principal): Extract<Principal, { kind: 'user' }> {
  if (principal.kind === 'user') return principal;
  if (principal.kind === 'anon') throw unauthorized('Sign in first: this needs a user token');
  throw forbidden('Only a signed-in person may do this');
}

export function requireService(principal: Principal): void {
  if (principal.kind !== 'service') throw forbidden('Only the service role may do this');
}

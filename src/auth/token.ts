import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { validationError } from '../platform/errors.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import { rateLimited } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';
import { invalidCredentials, refreshTokenAlreadyUsed, refreshTokenNotFound } from './errors.ts';
import { hashRefreshToken } from './refresh-token.ts';
import { Email, Password, SessionSchema } from './schemas.ts';
import { continueSession, type SessionDeps, startSession, type TokenResponse } from './session.ts';
import { findUserByEmail, findUserById, normalizeEmail } from './users.ts';

const PasswordGrant = z.object({ email: Email, password: Password });
const RefreshGrant = z.object({ refresh_token: z.string().min(1).max(200) });

const route = createRoute({
  method: 'post',
  path: '/token',
  summary: 'Sign in with a password, or exchange a refresh token (rotated on every use)',
  request: {
    query: z.object({ grant_type: z.enum(['password', 'refresh_token']) }),
    body: {
      required: true,
      content: { 'application/json': { schema: z.union([PasswordGrant, RefreshGrant]) } },
    },
  },
  responses: { 200: jsonResponse(SessionSchema, 'A session'), ...errorResponses(400, 429) },
});

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const r = schema.safeParse(body);
  if (!r.success)
    throw validationError(r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })));
  return r.data;
}

async function passwordGrant(s: Services, c: Context, body: unknown): Promise<TokenResponse> {
  const { email, password } = parse(PasswordGrant, body);
  const ip = c.get('clientIp') as string;
  const perIp = await s.limits.loginPerIp.hit(ip);
  if (!perIp.allowed) throw rateLimited(perIp.retryAfterSeconds, 'sign-in attempts from this address');
  // Locked accounts are refused before the password is even checked: that is the point of the lock.
  const emailKey = normalizeEmail(email);
  const perEmail = await s.limits.loginFailuresPerEmail.peek(emailKey);
  if (!perEmail.allowed)
    throw rateLimited(perEmail.retryAfterSeconds, 'failed sign-in attempts for this account');

  const user = await findUserByEmail(s.db, email);
  if (!(await s.passwords.verify(password, user?.encrypted_password))) {
    await s.limits.loginFailuresPerEmail.hit(emailKey);
    throw invalidCredentials();
  }
  const found = user as NonNullable<typeof user>;
  await s.limits.loginFailuresPerEmail.reset(emailKey);
  return s.db.transaction((tx) =>
    startSession(sessionDeps(s), tx, found, { ip, userAgent: c.req.header('user-agent') }),
  );
}

type Stored = {
  token_hash: string;
  revoked: boolean;
  age_seconds: number;
  session_id: string;
  user_id: string;
  session_created_at: Date;
};

/**
 * Rotation as GoTrue does it: each use revokes the token and issues its child. A revoked token
 * used again within the reuse interval (a client that lost the answer) gets a fresh child; later
 * than that it is a replay, and the whole family (the session) is revoked.
 */
async function refreshGrant(s: Services, body: unknown): Promise<TokenResponse> {
  const { refresh_token } = parse(RefreshGrant, body);
  const hash = hashRefreshToken(refresh_token);
  const outcome = await s.db.transaction(async (tx) => {
    const [rt] = await tx.query<Stored>(
      `select t.token_hash, t.revoked, extract(epoch from now() - t.updated_at)::float8 as age_seconds,
              t.session_id, t.user_id, s.created_at as session_created_at
         from auth.refresh_tokens t join auth.sessions s on s.id = t.session_id
        where t.token_hash = $1
        for update of t`,
      [hash],
    );
    if (!rt) return { error: refreshTokenNotFound() };
    if (rt.revoked && rt.age_seconds > s.config.refreshTokenReuseIntervalSeconds) {
      await tx.query('delete from auth.sessions where id = $1', [rt.session_id]);
      return { error: refreshTokenAlreadyUsed() };
    }
    if (!rt.revoked)
      await tx.query('update auth.refresh_tokens set revoked = true where token_hash = $1', [hash]);
    const user = await findUserById(tx, rt.user_id);
    if (!user) return { error: refreshTokenNotFound() };
    const session = { id: rt.session_id, created_at: rt.session_created_at };
    return { session: await continueSession(sessionDeps(s), tx, user, session, hash) };
  });
  // The family's revocation above is committed before the caller hears about it.
  if ('error' in outcome) throw outcome.error;
  return outcome.session;
}

const sessionDeps = (s: Services): SessionDeps => ({
  tokens: s.tokens,
  expiresIn: s.config.jwtExpirySeconds,
});

export function tokenRoutes(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const { grant_type } = c.req.valid('query');
    // The body schema is a union for the document; each grant checks its own shape.
    const body = c.req.valid('json');
    const session = grant_type === 'password' ? await passwordGrant(s, c, body) : await refreshGrant(s, body);
    return c.json(session, 200);
  });
}

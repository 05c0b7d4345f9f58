import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { fromZodIssues } from '../platform/errors.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { invalidCredentials } from './errors.ts';
import { clearLoginFailures, countLoginAttempt } from './login-guard.ts';
import { rotateRefreshToken } from './refresh-token.ts';
import { Email, Password, SessionSchema } from './schemas.ts';
import { startSession, type TokenResponse } from './session.ts';
import { findUserByEmail } from './users.ts';

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
  if (!r.success) throw fromZodIssues(r.error.issues);
  return r.data;
}

async function passwordGrant(s: Services, c: Context, body: unknown): Promise<TokenResponse> {
  const { email, password } = parse(PasswordGrant, body);
  const ip = c.get('clientIp') as string;
  await countLoginAttempt(s, email, ip);

  const user = await findUserByEmail(s.db, email);
  // An unknown email is checked against a dummy hash: it costs the same as a wrong password.
  const ok = await s.passwords.verify(password, user?.encrypted_password);
  if (!user || !ok) throw invalidCredentials();
  await clearLoginFailures(s, email, ip);
  return s.db.transaction((tx) =>
    startSession(s.sessions, tx, user, { ip, userAgent: c.req.header('user-agent') }),
  );
}

export function tokenRoutes(s: Services) {
  return newRouter().openapi(route, async (c) => {
    const { grant_type } = c.req.valid('query');
    // The body schema is a union for the document; each grant checks its own shape.
    const body = c.req.valid('json');
    const session =
      grant_type === 'password'
        ? await passwordGrant(s, c, body)
        : await rotateRefreshToken(
            s.sessions,
            s.db,
            parse(RefreshGrant, body).refresh_token,
            s.config.refreshTokenReuseIntervalSeconds,
          );
    return c.json(session, 200);
  });
}

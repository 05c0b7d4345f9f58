import type { Context } from 'hono';
import { bearerToken } from '../platform/http/authenticate.ts';
import { TokenError } from '../platform/jwt.ts';
import type { Services } from '../services.ts';
import { agentIsNotAUser, badJwt, noAuthorization, sessionNotFound } from './errors.ts';
import { sessionExists } from './session.ts';
import { findUserById, type UserRow } from './users.ts';

/**
 * The signed-in user behind the bearer token of an /auth/v1 request, answered with GoTrue's
 * errors. Unlike data requests, these check that the session still exists, so a token from a
 * session that was logged out stops working here at once.
 */
export async function currentUser(s: Services, c: Context): Promise<{ user: UserRow; sessionId: string }> {
  const token = bearerToken(c);
  if (!token) throw noAuthorization();
  let claims: Record<string, unknown>;
  try {
    claims = await s.tokens.verify(token);
  } catch (err) {
    throw badJwt(
      err instanceof TokenError && err.reason === 'expired'
        ? 'token is expired'
        : 'unable to verify the token',
    );
  }
  if (claims.org_role === 'agent') throw agentIsNotAUser();
  if (claims.role !== 'authenticated' || typeof claims.sub !== 'string') {
    throw badJwt('missing sub claim');
  }
  const sessionId = typeof claims.session_id === 'string' ? claims.session_id : '';
  if (!(await sessionExists(s.db, claims.sub, sessionId))) throw sessionNotFound();
  const user = await findUserById(s.db, claims.sub);
  if (!user) throw sessionNotFound();
  return { user, sessionId };
}

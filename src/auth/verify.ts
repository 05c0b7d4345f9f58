import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Queryable } from '../platform/db/database.ts';
import { AppError } from '../platform/errors.ts';
import { addressKey } from '../platform/http/client-ip.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import { rateLimited } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';
import { clearLoginFailures } from './login-guard.ts';
import { consumeCode, consumeLinkToken } from './one-time-token.ts';
import { allowedRedirect, withFragment } from './redirect.ts';
import { Email, SessionSchema } from './schemas.ts';
import { startSession, type TokenResponse } from './session.ts';
import { findUserById } from './users.ts';

// GoTrue's answer for every failed verification (unknown, used, expired, wrong code, too many tries).
const otpExpired = () => new AppError(403, 'otp_expired', 'Token has expired or is invalid');
const LINK_ERROR = 'Email link is invalid or has expired';

const Type = z.enum(['recovery']);

const viaLink = createRoute({
  method: 'get',
  path: '/verify',
  summary: 'Follow the link of a recovery mail (no apikey needed: it is opened from a mail)',
  security: [],
  description:
    'Answers 303 to `redirect_to` (when on the allow list; else the site URL) with the session in the fragment: ' +
    '`#access_token=…&expires_at=…&expires_in=…&refresh_token=…&token_type=bearer&type=recovery`; ' +
    'a used or expired link gets `#error=access_denied&error_code=otp_expired&error_description=…` instead.',
  request: {
    query: z.object({
      token: z.string().min(1).max(200),
      type: Type,
      redirect_to: z.string().max(2000).optional(),
    }),
  },
  responses: { 303: { description: 'Redirect to the site with the session or the error in the fragment' } },
});

const viaCode = createRoute({
  method: 'post',
  path: '/verify',
  summary: 'Sign in with the 6-digit code of a recovery mail, or the token of its link',
  request: jsonBody(
    z.union([
      z.object({
        type: Type,
        email: Email,
        token: z
          .string()
          .trim()
          .regex(/^\d{6}$/, 'must be the 6-digit code'),
      }),
      z.object({ type: Type, token_hash: z.string().min(1).max(200) }),
    ]),
  ),
  responses: { 200: jsonResponse(SessionSchema, 'A session'), ...errorResponses(400, 403, 429) },
});

/** Every guess costs a sign-in attempt of the caller's address, as a password would. */
async function countAttempt(s: Services, c: Context) {
  const perIp = await s.limits.loginPerIp.hit(addressKey(c.get('clientIp')));
  if (!perIp.allowed) throw rateLimited(perIp.retryAfterSeconds, 'sign-in attempts from this address');
}

/**
 * Uses up a token and signs its user in, in one transaction: a token is never spent without a
 * session to show for it. Undefined when the token does not check out; the transaction still
 * commits, so a wrong code's count stays counted.
 */
async function redeem(
  s: Services,
  c: Context,
  consume: (tx: Queryable) => Promise<{ userId: string } | undefined>,
): Promise<TokenResponse | undefined> {
  const session = await s.db.transaction(async (tx) => {
    const found = await consume(tx);
    const user = found && (await findUserById(tx, found.userId));
    if (!user) return undefined;
    // The mail reached its owner: the address is proven.
    await tx.query(
      'update auth.users set email_confirmed_at = coalesce(email_confirmed_at, now()) where id = $1',
      [user.id],
    );
    return startSession(s.sessions, tx, user, {
      ip: c.get('clientIp'),
      userAgent: c.req.header('user-agent'),
    });
  });
  // ...and whoever holds it may sign in again despite passwords guessed by others.
  if (session) await clearLoginFailures(s, session.user.email, c.get('clientIp'));
  return session;
}

export function verifyRoutes(s: Services) {
  const siteUrl = s.config.siteUrl ?? s.publicUrl;
  return newRouter()
    .openapi(viaLink, async (c) => {
      const q = c.req.valid('query');
      // The answer's Location carries a session: no cache may keep it.
      c.header('Cache-Control', 'no-store');
      const target = allowedRedirect(q.redirect_to, siteUrl, s.config.uriAllowList);
      // Link checkers (mail scanners, previews) often send HEAD first: it must not use the link up.
      if (c.req.method === 'HEAD') return c.redirect(target, 303);
      await countAttempt(s, c);
      const session = await redeem(s, c, (tx) => consumeLinkToken(tx, q.type, q.token));
      if (!session) {
        const error = { error: 'access_denied', error_code: 'otp_expired', error_description: LINK_ERROR };
        return c.redirect(withFragment(target, error), 303);
      }
      const { access_token, expires_at, expires_in, refresh_token, token_type } = session;
      return c.redirect(
        withFragment(target, {
          access_token,
          expires_at,
          expires_in,
          refresh_token,
          token_type,
          type: q.type,
        }),
        303,
      );
    })
    .openapi(viaCode, async (c) => {
      const body = c.req.valid('json');
      await countAttempt(s, c);
      const session = await redeem(s, c, (tx) =>
        'token_hash' in body
          ? consumeLinkToken(tx, body.type, body.token_hash)
          : consumeCode(tx, body.type, body.email, body.token),
      );
      if (!session) throw otpExpired();
      return c.json(session, 200);
    });
}

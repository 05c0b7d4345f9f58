import { createRoute, z } from '@hono/zod-openapi';
import { addressKey } from '../platform/http/client-ip.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import { rateLimited } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';
import { issueToken } from './one-time-token.ts';
import { allowedRedirect } from './redirect.ts';
import { Email } from './schemas.ts';
import { findUserByEmail, normalizeEmail } from './users.ts';

// auth-js also sends code_challenge fields (PKCE flow, not offered) and gotrue_meta_security: ignored.
const route = createRoute({
  method: 'post',
  path: '/recover',
  summary: 'Mail a password-recovery link and code',
  description:
    'Answers 200 `{}` whether or not the email has an account. The mail holds a link to `/auth/v1/verify` ' +
    '(signs the person in once, then redirects to `redirect_to` when allowed, else the site URL) and a 6-digit ' +
    'code for `POST /auth/v1/verify`; both work once, for RECOVERY_TOKEN_TTL_SECONDS. Then `PUT /auth/v1/user` sets the new password.',
  request: {
    query: z.object({ redirect_to: z.string().max(2000).optional() }),
    body: { required: true, content: { 'application/json': { schema: z.object({ email: Email }) } } },
  },
  responses: {
    200: jsonResponse(z.object({}), 'Accepted (also for an unknown email)'),
    ...errorResponses(400, 429),
  },
});

export function recoverRoutes(s: Services) {
  const siteUrl = s.config.siteUrl ?? s.publicUrl;
  return newRouter().openapi(route, async (c) => {
    const { email } = c.req.valid('json');
    const perIp = await s.limits.recoverPerIp.hit(addressKey(c.get('clientIp')));
    if (!perIp.allowed) throw rateLimited(perIp.retryAfterSeconds, 'recovery requests from this address');
    // Counted by the address asked for, account or not, so the limit tells nothing either.
    const perEmail = await s.limits.recoverPerEmail.hit(normalizeEmail(email));
    if (!perEmail.allowed) throw rateLimited(perEmail.retryAfterSeconds, 'recovery mails for this email');

    // Answered before the lookup: the token write happens for registered emails only, and its
    // time would tell who has an account. A graceful stop waits for this work (MailDispatch).
    const redirectTo = allowedRedirect(c.req.valid('query').redirect_to, siteUrl, s.config.uriAllowList);
    s.mail.later('recovery mail', async () => {
      const user = await findUserByEmail(s.db, email);
      if (!user) return;
      const ttlSeconds = s.config.recovery.tokenTtlSeconds;
      const { token, code } = await s.db.transaction((tx) =>
        issueToken(tx, { userId: user.id, type: 'recovery', ttlSeconds }),
      );
      const link = new URL(`${s.publicUrl}/auth/v1/verify`);
      link.search = new URLSearchParams({ token, type: 'recovery', redirect_to: redirectTo }).toString();
      s.mail.post(recoveryMail(user.email, link.toString(), code, siteUrl, ttlSeconds));
    });
    return c.json({}, 200);
  });
}

function recoveryMail(to: string, link: string, code: string, siteUrl: string, ttlSeconds: number) {
  const minutes = Math.round(ttlSeconds / 60);
  return {
    to,
    subject: 'Reset your password',
    link,
    text: [
      `Someone asked to reset the password of the account ${to} at ${siteUrl}.`,
      '',
      'Follow this link to sign in and choose a new password:',
      link,
      '',
      `Or enter this code: ${code}`,
      '',
      `The link and the code work once, for ${minutes} minutes. If you did not ask for this, ignore`,
      'this mail: your password stays as it is.',
    ].join('\n'),
  };
}

import { requireApiKey } from '../platform/http/authenticate.ts';
import { meterIfSignedIn } from '../platform/http/meter.ts';
import { newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { logoutRoutes } from './logout.ts';
import { metaRoutes } from './meta.ts';
import { recoverRoutes } from './recover.ts';
import { signupRoutes } from './signup.ts';
import { tokenRoutes } from './token.ts';
import { userRoutes } from './user.ts';
import { verifyRoutes } from './verify.ts';

/** /auth/v1: a GoTrue-compatible identity provider for @supabase/auth-js. */
export function authRoutes(s: Services) {
  const app = newRouter();
  app.use('*', async (c, next) => {
    await next();
    c.header('X-Supabase-Api-Version', '2024-01-01');
  });
  // Public keys are public: anyone verifying our tokens may fetch them without an API key. The
  // link of a recovery mail is opened by a browser, which has no API key to send (as in Supabase).
  const guard = requireApiKey(s.tokens);
  const open = (c: { req: { path: string; method: string } }) =>
    c.req.path.endsWith('/.well-known/jwks.json') ||
    ((c.req.method === 'GET' || c.req.method === 'HEAD') && c.req.path.endsWith('/verify'));
  app.use('*', async (c, next) => (open(c) ? next() : guard(c, next)));
  // Signed-in requests count against the caller's rate limit and the organization's daily quota.
  // Counted, never refused by the daily quota: a person at the quota must still see who they are.
  const metered = meterIfSignedIn(s, 'count');
  app.use('/user', metered);
  app.use('/logout', metered);
  for (const r of [
    signupRoutes(s),
    tokenRoutes(s),
    userRoutes(s),
    logoutRoutes(s),
    metaRoutes(s),
    recoverRoutes(s),
    verifyRoutes(s),
  ])
    app.route('/', r);
  return app;
}

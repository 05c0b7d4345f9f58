import { createRoute } from '@hono/zod-openapi';
import {
  instagramLongLivedToken,
  instagramMe,
  instagramShortLivedToken,
  subscribeInstagram,
} from '../channels/meta-oauth-instagram.ts';
import { saveProof } from '../domain/connected-accounts.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import {
  ConnectedSchema,
  connectedJson,
  instagramConfig,
  requireConfigured,
  SignInBody,
  takeSignIn,
} from './connect-sign-in.ts';

// "Connect Instagram" (Instagram API with Instagram Login), after the authorization window:
// POST /functions/v1/connect-instagram {state, code}. The code becomes a short-lived token, that a
// long-lived one (60 days; the daily connection check refreshes it), /me names the professional
// account it acts for, the app is subscribed to its messages, and the account is connected with
// its token's expiry.

const route = createRoute({
  method: 'post',
  path: '/connect-instagram',
  summary: 'Finish Instagram Login: connect the Instagram professional account (owners and admins)',
  description:
    '400 `invalid_state`, 400 `sign_in_cancelled`, 403 `account_not_verified` (Instagram refused the code), ' +
    '502 `provider_error`.',
  request: jsonBody(SignInBody),
  responses: { 201: jsonResponse(ConnectedSchema, 'Connected'), ...errorResponses(400, 401, 403, 409, 502) },
});

export function connectInstagram(s: Services) {
  return newRouter().openapi(route, async (c) => {
    requireConfigured(s, 'instagram');
    const principal = c.get('principal');
    const { code, redirect_uri } = await takeSignIn(s, principal, 'instagram', c.req.valid('json'));
    // Outside calls, no transaction open.
    const config = instagramConfig(s);
    const short = await instagramShortLivedToken(config, code, redirect_uri);
    const long = await instagramLongLivedToken(config, short.access_token);
    const me = await instagramMe(config, long.access_token);
    await subscribeInstagram(config, long.access_token);
    const account = await saveProof(s, principal, {
      provider: 'instagram',
      external_id: me.user_id,
      name: me.username,
      access_token: long.access_token,
      webhook_secret: null,
      token_expires_at: long.expires_at,
      verified_by: 'oauth',
    });
    return c.json(connectedJson([{ account, expires: long.expires_at }]), 201);
  });
}

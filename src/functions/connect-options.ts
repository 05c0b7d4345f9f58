import { createRoute, z } from '@hono/zod-openapi';
import { embeddedSignupUrl, facebookDialogUrl } from '../channels/meta-oauth.ts';
import { instagramAuthorizeUrl } from '../channels/meta-oauth-instagram.ts';
import { startConnect } from '../domain/connect-state.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import {
  type DialogState,
  instagramConfig,
  metaConfig,
  missingFor,
  notConfiguredMessage,
  redirectUriOf,
  requireConfigured,
  type SIGN_INS,
} from './connect-sign-in.ts';

// GET /functions/v1/connect-options: which sign-in buttons work here, and for the others the
// sentence saying what the operator must configure. POST /functions/v1/connect-start: a new
// single-use state for one sign-in and the address to send the browser to (the dialog at Meta or
// Instagram); the browser comes back to the dashboard's /app/accounts/connect/{provider}.

const Option = z.object({
  available: z.boolean(),
  message: z.string().nullable().openapi({ description: 'Why the button does not work, for the person' }),
  redirect_uri: z.string(),
});

const options = createRoute({
  method: 'get',
  path: '/connect-options',
  summary: 'Which sign-ins can connect accounts here (members)',
  responses: {
    200: jsonResponse(
      z.object({ facebook: Option, whatsapp: Option, instagram: Option }).openapi('ConnectOptions'),
      'One entry per sign-in',
    ),
    ...errorResponses(401, 403),
  },
});

const start = createRoute({
  method: 'post',
  path: '/connect-start',
  summary: 'Start connecting accounts by signing in with Meta or Instagram (owners and admins)',
  description:
    'Answers the dialog address to open (Embedded Signup in a popup for `whatsapp`). Its `state` is single-use, ' +
    'bound to the caller and organization, and lasts 15 minutes. 409 `connect_not_configured` names what the ' +
    'operator must set.',
  request: jsonBody(z.strictObject({ provider: z.enum(['facebook', 'whatsapp', 'instagram']) })),
  responses: {
    200: jsonResponse(
      z.object({ url: z.string(), state: z.string() }).openapi('ConnectStart'),
      'Where to go',
    ),
    ...errorResponses(400, 401, 403, 409),
  },
});

export function connectOptions(s: Services) {
  return newRouter()
    .openapi(options, (c) => {
      const entry = (p: (typeof SIGN_INS)[number]) => {
        const missing = missingFor(s, p);
        return {
          available: missing.length === 0,
          message: missing.length ? notConfiguredMessage(p, missing) : null,
          redirect_uri: redirectUriOf(s, p),
        };
      };
      return c.json(
        { facebook: entry('facebook'), whatsapp: entry('whatsapp'), instagram: entry('instagram') },
        200,
      );
    })
    .openapi(start, async (c) => {
      const { provider } = c.req.valid('json');
      requireConfigured(s, provider);
      const redirectUri = redirectUriOf(s, provider);
      const state = await startConnect(s, c.get('principal'), provider, {
        step: 'dialog',
        redirect_uri: redirectUri,
      } satisfies DialogState);
      const url =
        provider === 'instagram'
          ? instagramAuthorizeUrl(instagramConfig(s), redirectUri, state)
          : provider === 'whatsapp'
            ? embeddedSignupUrl(metaConfig(s), redirectUri, state)
            : facebookDialogUrl(metaConfig(s), redirectUri, state);
      return c.json({ url, state }, 200);
    });
}

import { createRoute, z } from '@hono/zod-openapi';
import {
  exchangeCode,
  longLivedUserToken,
  type ManagedPage,
  managedPages,
  subscribeApp,
} from '../channels/meta-oauth.ts';
import { notConfirmed } from '../channels/meta-oauth-http.ts';
import {
  CONNECT_STATE_TTL_SECONDS,
  invalidConnectState,
  startConnect,
  takeConnect,
} from '../domain/connect-state.ts';
import { saveProof } from '../domain/connected-accounts.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import {
  ConnectedSchema,
  connectedJson,
  metaConfig,
  requireConfigured,
  SignInBody,
  takeSignIn,
} from './connect-sign-in.ts';

// "Connect with Facebook" (Facebook Login for Business), after the dialog:
// POST /functions/v1/connect-facebook {state, code} exchanges the code, then for a long-lived user
// token, reads the Pages the person manages (with their Page tokens and linked Instagram business
// accounts) and answers them, names and ids only, with a new state for the picking step; the
// tokens stay sealed in that state, never in the browser.
// POST /functions/v1/connect-facebook-select {state, page_ids, instagram_ids} connects what the
// person picked, each with its Page's token (an Instagram business account acts through its Page),
// after subscribing the app to each Page's webhooks. Only what this sign-in granted can be picked.

type PickState = { step: 'pick'; pages: ManagedPage[] };

const PageSchema = z.object({
  id: z.string(),
  name: z.string(),
  instagram: z.object({ id: z.string(), username: z.string().nullable() }).nullable(),
});

const exchange = createRoute({
  method: 'post',
  path: '/connect-facebook',
  summary:
    'Finish Facebook Login: the Pages and Instagram accounts the person may connect (owners and admins)',
  description:
    'Posts the `code` and `state` (or Meta’s `error`) the dialog sent back. Answers the Pages with their linked ' +
    'Instagram business accounts and a new single-use `state` for connect-facebook-select; no token is ever ' +
    'answered. 400 `invalid_state`, 400 `sign_in_cancelled`, 403 `account_not_verified` (Meta refused the code), ' +
    '502 `provider_error`.',
  request: jsonBody(SignInBody),
  responses: {
    200: jsonResponse(
      z
        .object({ state: z.string().nullable(), expires_in: z.number().int(), pages: z.array(PageSchema) })
        .openapi('FacebookPages'),
      'What can be connected',
    ),
    ...errorResponses(400, 401, 403, 409, 502),
  },
});

const ids = z.array(z.string().trim().min(1).max(64)).max(100).default([]);

const select = createRoute({
  method: 'post',
  path: '/connect-facebook-select',
  summary: 'Connect the Pages and Instagram accounts picked after Facebook Login (owners and admins)',
  description:
    'Only ids the sign-in listed can be connected: any other is 403 `account_not_verified` and nothing is ' +
    'connected. The state is single-use.',
  request: jsonBody(
    z
      .strictObject({ state: z.string().min(1).max(200), page_ids: ids, instagram_ids: ids })
      .refine((b) => b.page_ids.length + b.instagram_ids.length > 0, {
        message: 'Pick at least one Page or Instagram account',
        path: ['page_ids'],
      }),
  ),
  responses: { 201: jsonResponse(ConnectedSchema, 'Connected'), ...errorResponses(400, 401, 403, 409, 502) },
});

export function connectFacebook(s: Services) {
  return newRouter()
    .openapi(exchange, async (c) => {
      requireConfigured(s, 'facebook');
      const principal = c.get('principal');
      const { code, redirect_uri } = await takeSignIn(s, principal, 'facebook', c.req.valid('json'));
      // Outside calls, no transaction open.
      const config = metaConfig(s);
      const short = await exchangeCode(config, 'facebook', code, redirect_uri);
      const long = await longLivedUserToken(config, short.access_token);
      const pages = await managedPages(config, long.access_token);
      // Nothing granted: no state to pick with; the dashboard says what to do at Meta.
      const state = pages.length
        ? await startConnect(s, principal, 'facebook', { step: 'pick', pages } satisfies PickState)
        : null;
      return c.json(
        {
          state,
          expires_in: CONNECT_STATE_TTL_SECONDS,
          pages: pages.map((p) => ({ id: p.id, name: p.name, instagram: p.instagram })),
        },
        200,
      );
    })
    .openapi(select, async (c) => {
      requireConfigured(s, 'facebook');
      const principal = c.get('principal');
      const body = c.req.valid('json');
      const data = await takeConnect<PickState | null>(s, principal, 'facebook', body.state);
      if (data?.step !== 'pick') throw invalidConnectState();
      const check = 'the Pages this sign-in granted (GET /me/accounts)';
      // Every id must be one the sign-in granted, before anything is stored.
      const pages = body.page_ids.map((id) => {
        const page = data.pages.find((p) => p.id === id);
        if (!page) throw notConfirmed('facebook', check, null, `access to Page ${id}`);
        return page;
      });
      const instagram = body.instagram_ids.map((id) => {
        const page = data.pages.find((p) => p.instagram?.id === id);
        if (!page?.instagram)
          throw notConfirmed('facebook', check, null, `access to Instagram account ${id}`);
        return { page, account: page.instagram };
      });
      // The app hears a Page's (and its Instagram account's) messages once subscribed: each Page once.
      const config = metaConfig(s);
      const subscribed = new Set<string>();
      for (const page of [...pages, ...instagram.map((i) => i.page)]) {
        if (subscribed.has(page.id)) continue;
        await subscribeApp(config, 'facebook', page.id, page.access_token);
        subscribed.add(page.id);
      }
      const connected = [];
      for (const page of pages) {
        const account = await saveProof(s, principal, {
          provider: 'facebook',
          external_id: page.id,
          name: page.name,
          access_token: page.access_token,
          webhook_secret: null,
          // A Page token read with a long-lived user token does not expire.
          token_expires_at: null,
          verified_by: 'oauth',
        });
        connected.push({ account, expires: null });
      }
      for (const { page, account: ig } of instagram) {
        const account = await saveProof(s, principal, {
          provider: 'instagram',
          external_id: ig.id,
          name: ig.username,
          access_token: page.access_token,
          webhook_secret: null,
          token_expires_at: null,
          verified_by: 'oauth',
        });
        connected.push({ account, expires: null });
      }
      return c.json(connectedJson(connected), 201);
    });
}

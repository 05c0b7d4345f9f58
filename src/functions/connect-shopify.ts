import { createRoute, z } from '@hono/zod-openapi';
import type { ShopifyAdminConfig } from '../channels/shopify-admin.ts';
import { authorizeUrl, SHOPIFY_SCOPES } from '../channels/shopify-oauth.ts';
import { startConnect } from '../domain/connect-state.ts';
import { saveProof } from '../domain/connected-accounts.ts';
import { AppError, invalidField } from '../platform/errors.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { finishShopifyInstall, type InstallConfig } from './connect-shopify-install.ts';
import { iso } from './schemas.ts';

// /functions/v1/connect-shopify: "Install on Shopify" (docs/connecting-accounts.md "Shopify").
// GET says whether the operator configured the app and where Shopify must send the browser back;
// POST …/start gives the shop's install address with a fresh single-use state; POST …/callback
// takes the query Shopify sent the browser back with (the dashboard posts it) and connects the
// shop once Shopify has proven it (connect-shopify-install.ts).

const base = '/connect-shopify';

/** Where the shop's admin is reached and where its order webhooks go. */
export const shopifyAdminConfig = (s: Pick<Services, 'config' | 'publicUrl'>): ShopifyAdminConfig => ({
  shopUrl: s.config.shopify.shopUrl,
  apiVersion: s.config.shopify.apiVersion,
  timeoutMs: s.config.shopify.timeoutMs,
  webhookAddress: `${s.publicUrl}/functions/v1/shopify-webhook`,
});

/** The dashboard page Shopify sends the browser back to: the app's allowed redirection URL. */
export const shopifyRedirectUrl = (s: Pick<Services, 'config' | 'publicUrl'>) =>
  `${s.config.siteUrl ?? s.publicUrl}/app/accounts/shopify`;

const NOT_CONFIGURED =
  'Installing on Shopify is not set up on this service: its operator must set SHOPIFY_API_KEY and SHOPIFY_API_SECRET (the Shopify app’s client id and secret)';

function installConfig(s: Services): InstallConfig {
  const { apiKey, apiSecret } = s.config.shopify;
  if (!apiKey || !apiSecret) throw new AppError(409, 'shopify_not_configured', NOT_CONFIGURED);
  return { admin: shopifyAdminConfig(s), app: { apiKey, apiSecret }, redirectUrl: shopifyRedirectUrl(s) };
}

const Shop = z
  .string()
  .trim()
  .toLowerCase()
  // People type their shop's name, or paste its admin address: keep the domain.
  .transform((v) => v.replace(/^https?:\/\//, '').replace(/\/.*$/, ''))
  .transform((v) => (v.includes('.') ? v : `${v}.myshopify.com`))
  .pipe(
    z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,99}\.myshopify\.com$/, 'Enter the shop’s my-shop.myshopify.com domain'),
  );

const settings = createRoute({
  method: 'get',
  path: base,
  summary: 'Whether “Install on Shopify” is configured, and the redirection URL the Shopify app must allow',
  responses: {
    200: jsonResponse(
      z.object({
        configured: z.boolean(),
        message: z.string().nullable(),
        redirect_url: z.string(),
        scopes: z.array(z.string()),
      }),
      'Settings',
    ),
    ...errorResponses(401, 403),
  },
});

const start = createRoute({
  method: 'post',
  path: `${base}/start`,
  summary:
    'Start installing the Shopify app on a shop (owners and admins): the address to send the browser to',
  request: jsonBody(z.strictObject({ shop: z.string().max(300) })),
  responses: {
    200: jsonResponse(z.object({ authorize_url: z.string(), shop: z.string() }), 'Go to Shopify'),
    ...errorResponses(400, 401, 403, 409),
  },
});

const callback = createRoute({
  method: 'post',
  path: `${base}/callback`,
  summary:
    'Finish installing: the query Shopify redirected the browser with (code, hmac, host, shop, state, timestamp)',
  description:
    'The `hmac` must be Shopify’s over the other parameters with the app’s secret, `shop` the one the state was ' +
    'started for, and `state` unused, unexpired and the caller’s own. The code is exchanged for an offline token, ' +
    'the shop read with it, and the order webhooks registered; then the shop is connected (verified_by oauth).',
  request: jsonBody(z.strictObject({ query: z.record(z.string(), z.string().max(2000)) })),
  responses: {
    201: jsonResponse(
      z.object({
        id: z.uuid(),
        provider: z.literal('shopify'),
        external_id: z.string(),
        name: z.string().nullable(),
        status: z.string(),
        verified_by: z.literal('oauth'),
        webhook_topics: z.array(z.string()),
        created_at: z.string(),
      }),
      'Connected',
    ),
    ...errorResponses(400, 401, 403, 409, 502),
  },
});

export function connectShopify(s: Services) {
  return newRouter()
    .openapi(settings, (c) => {
      const { apiKey, apiSecret } = s.config.shopify;
      const configured = Boolean(apiKey && apiSecret);
      return c.json(
        {
          configured,
          message: configured ? null : NOT_CONFIGURED,
          redirect_url: shopifyRedirectUrl(s),
          scopes: [...SHOPIFY_SCOPES],
        },
        200,
      );
    })
    .openapi(start, async (c) => {
      const config = installConfig(s);
      const parsed = Shop.safeParse(c.req.valid('json').shop);
      if (!parsed.success)
        throw invalidField(
          'shop',
          'Enter the shop’s my-shop.myshopify.com domain',
          'Enter the shop’s my-shop.myshopify.com domain',
        );
      const shop = parsed.data;
      const state = await startConnect(s, c.get('principal'), 'shopify', { shop });
      return c.json(
        { authorize_url: authorizeUrl(config.admin, config.app, shop, config.redirectUrl, state), shop },
        200,
      );
    })
    .openapi(callback, async (c) => {
      const config = installConfig(s);
      const { account, topics } = await finishShopifyInstall(
        s,
        config,
        c.get('principal'),
        c.req.valid('json').query,
        {
          connect: saveProof,
        },
      );
      return c.json(
        {
          id: account.id,
          provider: 'shopify' as const,
          external_id: account.external_id,
          name: account.name,
          status: account.status,
          verified_by: 'oauth' as const,
          webhook_topics: topics,
          created_at: iso(account.created_at),
        },
        201,
      );
    });
}

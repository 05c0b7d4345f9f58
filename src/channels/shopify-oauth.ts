// Shopify's OAuth install (authorization code grant), the app's side: the address that asks a shop
// to install the app, the check of the callback's `hmac`, and the exchange of its code for an
// offline access token (docs/connecting-accounts.md "Shopify"). Takes the app's client id and
// secret; the secret never leaves in a URL, an error or a log.
import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  callShop,
  notVerified,
  type ShopifyAdminConfig,
  shopBase,
  shopUnreachable,
} from './shopify-admin.ts';

export type ShopifyApp = { apiKey: string; apiSecret: string };

/**
 * What the app asks for: read_orders alone, the one scope the order webhooks need (Shopify sends
 * orders/* topics only to apps that may read orders). Nothing the service does not use.
 */
export const SHOPIFY_SCOPES = ['read_orders'] as const;

/**
 * Where the browser goes to install the app on `shop`. No `grant_options[]=per-user`: the token is
 * offline (it acts for the shop, not for the person who clicked, and outlives their session).
 */
export function authorizeUrl(
  config: Pick<ShopifyAdminConfig, 'shopUrl'>,
  app: Pick<ShopifyApp, 'apiKey'>,
  shop: string,
  redirectUri: string,
  state: string,
): string {
  const q = new URLSearchParams({
    client_id: app.apiKey,
    scope: SHOPIFY_SCOPES.join(','),
    redirect_uri: redirectUri,
    state,
  });
  return `${shopBase(config, shop)}/admin/oauth/authorize?${q}`;
}

/**
 * The message Shopify signs on a redirect: every query parameter but `hmac` (and the legacy
 * `signature`), decoded, sorted by name, joined as name=value with `&`.
 */
export function callbackMessage(params: Record<string, string>): string {
  return Object.keys(params)
    .filter((k) => k !== 'hmac' && k !== 'signature')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
}

/** The `hmac` Shopify puts on a redirect to the app: hex HMAC-SHA256 of the message, app secret. */
export const callbackHmac = (params: Record<string, string>, secret: string) =>
  createHmac('sha256', secret).update(callbackMessage(params)).digest('hex');

/** Whether the callback's parameters carry Shopify's `hmac` for them. Constant time. */
export function verifyCallback(params: Record<string, string>, secret: string): boolean {
  const given = params.hmac ?? '';
  if (!/^[0-9a-f]{64}$/i.test(given)) return false;
  const expected = Buffer.from(callbackHmac(params, secret), 'hex');
  return timingSafeEqual(Buffer.from(given.toLowerCase(), 'hex'), expected);
}

const EXCHANGE_CHECK = 'POST /admin/oauth/access_token with the code';

/**
 * Exchanges an install's code for the shop's offline token. A code Shopify does not take (used,
 * expired, another app's) is 403 account_not_verified; no answer or a 5xx is 502.
 */
export async function exchangeCode(
  config: ShopifyAdminConfig,
  app: ShopifyApp,
  shop: string,
  code: string,
): Promise<{ access_token: string; scope: string }> {
  const answer = await callShop(
    config,
    'POST',
    `${shopBase(config, shop)}/admin/oauth/access_token`,
    {},
    {
      client_id: app.apiKey,
      client_secret: app.apiSecret,
      code,
    },
  );
  if (!answer || answer.status >= 500 || answer.status === 429)
    throw shopUnreachable(shop, EXCHANGE_CHECK, answer ? { status: answer.status } : {});
  const token = answer.body.access_token;
  if (answer.status !== 200 || typeof token !== 'string' || !token)
    throw notVerified(
      shop,
      EXCHANGE_CHECK,
      typeof answer.body.error_description === 'string'
        ? answer.body.error_description.slice(0, 300)
        : 'the install code was refused; start installing again',
    );
  return { access_token: token, scope: typeof answer.body.scope === 'string' ? answer.body.scope : '' };
}

import type { Proof } from '../channels/proof.ts';
import {
  isShopDomain,
  registerOrderWebhooks,
  type ShopifyAdminConfig,
  shopOfToken,
} from '../channels/shopify-admin.ts';
import { exchangeCode, type ShopifyApp, verifyCallback } from '../channels/shopify-oauth.ts';
import { takeConnect } from '../domain/connect-state.ts';
import type { ConnectedAccount } from '../domain/connected-accounts.ts';
import type { Deps } from '../domain/deps.ts';
import type { Principal } from '../platform/db/database.ts';
import { AppError } from '../platform/errors.ts';

// The end of Shopify's install (docs/connecting-accounts.md "Shopify"): the query Shopify sent the
// browser back with is checked in the order that spends the least on a forgery — Shopify's `hmac`
// over the other parameters (constant time), a well-formed shop, then the single-use state (the
// caller's own, for that same shop) — and only then does the service call out: the code for an
// offline token, shop.json with it, the order webhooks. No outside call runs inside a database
// transaction; the account is stored last, by the one function that stores proven accounts.

export type InstallConfig = { admin: ShopifyAdminConfig; app: ShopifyApp; redirectUrl: string };

const invalidCallback = (message: string) => new AppError(400, 'invalid_callback', message);

export async function finishShopifyInstall(
  deps: Pick<Deps, 'db' | 'secrets'>,
  config: InstallConfig,
  principal: Principal,
  query: Record<string, string>,
  store: {
    connect: (
      deps: Pick<Deps, 'db' | 'secrets'>,
      principal: Principal,
      proof: Proof,
    ) => Promise<ConnectedAccount>;
  },
): Promise<{ account: ConnectedAccount; topics: string[] }> {
  if (!verifyCallback(query, config.app.apiSecret))
    throw invalidCallback(
      'This install link was not signed by Shopify: start installing again from the dashboard',
    );
  const shop = query.shop ?? '';
  const { code, state } = query;
  if (!isShopDomain(shop) || !code || !state)
    throw invalidCallback('Shopify’s answer is missing the shop, code or state: start installing again');
  // Spent whatever follows: a state is good for one try.
  const started = await takeConnect<{ shop: string } | null>(deps, principal, 'shopify', state);
  if (started?.shop !== shop)
    throw invalidCallback(`The app was installed on ${shop}, not on the shop you started with: start again`);

  const { access_token } = await exchangeCode(config.admin, config.app, shop, code);
  const named = await shopOfToken(config.admin, shop, access_token);
  const address = config.admin.webhookAddress;
  const topics = address ? await registerOrderWebhooks(config.admin, shop, access_token, address) : [];
  const account = await store.connect(deps, principal, {
    provider: 'shopify',
    external_id: shop,
    name: named.name,
    access_token,
    // Deliveries to an installed app are signed with the app's secret (SHOPIFY_API_SECRET).
    webhook_secret: null,
    token_expires_at: null,
    verified_by: 'oauth',
  });
  return { account, topics };
}

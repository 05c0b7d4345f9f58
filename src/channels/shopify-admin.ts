// Shopify's Admin API as the service uses it to prove and keep a shop (docs/connecting-accounts.md
// "Shopify"): the shop endpoint read with a token proves the token acts for that shop; the order
// webhooks are registered through the REST Admin API. Takes plain configuration and the shop's
// token; gives a Proof, or throws 403 account_not_verified (Shopify refused the token, or it is
// another shop's) or 502 provider_error (Shopify could not be asked, or failed on its side). The
// token travels in X-Shopify-Access-Token only, never in a URL, an error or a log.
import { accountNotVerified, type ErrorDetails, invalidField, providerFailed } from '../platform/errors.ts';
import type { Proof } from './proof.ts';
import { SHOPIFY_ORDER_TOPICS } from './shopify-order.ts';

export type ShopifyAdminConfig = {
  /** https://{shop}, or the fake's http://127.0.0.1:PORT/{shop}: where a shop's admin is reached. */
  shopUrl: string;
  /** 2026-10 */
  apiVersion: string;
  /** Deadline of one call, answer body included. */
  timeoutMs: number;
  /** Where the shop sends its order webhooks ({PUBLIC_URL}/functions/v1/shopify-webhook). */
  webhookAddress?: string;
};

// Shopify names a shop by its permanent domain, lowercase (X-Shopify-Shop-Domain, `shop` in OAuth).
const SHOP_DOMAIN = /^[a-z0-9][a-z0-9-]{0,99}\.myshopify\.com$/;

/** Whether `shop` is a shop's permanent my-shop.myshopify.com domain (lowercase). */
export const isShopDomain = (shop: string) => SHOP_DOMAIN.test(shop);

/** A shop's base address: SHOPIFY_SHOP_URL with the (already validated) domain in it. */
export const shopBase = (config: Pick<ShopifyAdminConfig, 'shopUrl'>, shop: string) =>
  config.shopUrl.replace('{shop}', shop);

const adminUrl = (config: ShopifyAdminConfig, shop: string, path: string) =>
  `${shopBase(config, shop)}/admin/api/${config.apiVersion}/${path}`;

export type ShopifyAnswer = { status: number; body: Record<string, unknown> };

/**
 * One call to a shop; `null` when no answer came (network, deadline). Never follows a redirect:
 * Shopify answers the Admin API in place, and a redirect could carry the token elsewhere.
 */
export async function callShop(
  config: Pick<ShopifyAdminConfig, 'timeoutMs'>,
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<ShopifyAnswer | null> {
  try {
    const res = await fetch(url, {
      method,
      headers: {
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(config.timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return {
      status: res.status,
      body: parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {},
    };
  } catch {
    return null;
  }
}

export const notVerified = (shop: string, check: string, reason: string) =>
  accountNotVerified(`Shopify says this token can't act for ${shop}: ${reason}`, {
    provider: 'shopify',
    external_id: shop,
    check,
  });

export const shopUnreachable = (shop: string, check: string, details: ErrorDetails = {}) =>
  providerFailed(`Shopify could not be asked about ${shop}; try again in a moment`, {
    provider: 'shopify',
    external_id: shop,
    check,
    ...details,
  });

/** Shopify's own words for a refusal: `errors` is a string or an object of lists. */
const shopifyReason = (body: Record<string, unknown>, status: number) => {
  const e = body.errors ?? body.error_description ?? body.error;
  if (typeof e === 'string') return e.slice(0, 300);
  if (e && typeof e === 'object') return JSON.stringify(e).slice(0, 300);
  return `it answered ${status}`;
};

type ShopRead =
  | { ok: true; shop: { myshopify_domain: string; name: string | null } }
  | { ok: false; reason: string };

/** GET shop.json with the token: the shop it acts for, or Shopify's reason it does not. 502 when unanswered. */
async function readShop(
  config: ShopifyAdminConfig,
  shop: string,
  token: string,
  check: string,
): Promise<ShopRead> {
  const answer = await callShop(config, 'GET', adminUrl(config, shop, 'shop.json'), {
    'x-shopify-access-token': token,
  });
  if (!answer || answer.status >= 500 || answer.status === 429)
    throw shopUnreachable(shop, check, answer ? { status: answer.status } : {});
  if (answer.status !== 200) return { ok: false, reason: shopifyReason(answer.body, answer.status) };
  const s = (answer.body.shop ?? {}) as Record<string, unknown>;
  const domain = typeof s.myshopify_domain === 'string' ? s.myshopify_domain.toLowerCase() : '';
  return { ok: true, shop: { myshopify_domain: domain, name: typeof s.name === 'string' ? s.name : null } };
}

const SHOP_CHECK = 'GET /admin/api/{version}/shop.json with the token';

/**
 * Proves a pasted token (a custom app's Admin API access token): shop.json read with it must be
 * `shop` itself. Then registers the order webhooks, when the configuration says where to: a shop
 * whose orders never arrive would look connected and stay silent.
 */
export async function proveShopifyAccount(
  config: ShopifyAdminConfig,
  input: { shop: string; access_token: string; webhook_secret: string | null },
): Promise<Proof> {
  const shop = input.shop.trim().toLowerCase();
  if (!isShopDomain(shop))
    throw invalidField('external_id', 'A Shopify account is its shop domain, e.g. my-shop.myshopify.com');
  const read = await readShop(config, shop, input.access_token, SHOP_CHECK);
  if (!read.ok) throw notVerified(shop, SHOP_CHECK, read.reason);
  if (read.shop.myshopify_domain !== shop)
    throw notVerified(
      shop,
      SHOP_CHECK,
      `the token belongs to ${read.shop.myshopify_domain || 'another shop'}`,
    );
  if (config.webhookAddress)
    await registerOrderWebhooks(config, shop, input.access_token, config.webhookAddress);
  return {
    provider: 'shopify',
    external_id: shop,
    name: read.shop.name,
    access_token: input.access_token,
    webhook_secret: input.webhook_secret,
    token_expires_at: null,
    verified_by: 'token',
  };
}

/** The shop a freshly exchanged OAuth token acts for, named; 403 when it is not `shop`. */
export async function shopOfToken(config: ShopifyAdminConfig, shop: string, token: string) {
  const read = await readShop(config, shop, token, SHOP_CHECK);
  if (!read.ok) throw notVerified(shop, SHOP_CHECK, read.reason);
  if (read.shop.myshopify_domain !== shop)
    throw notVerified(shop, SHOP_CHECK, 'the token belongs to another shop');
  return read.shop;
}

/**
 * Registers every order topic src/channels/shopify-order.ts reads at `address` (REST Admin API
 * webhooks.json), skipping those the shop already sends there, so a reconnect registers nothing
 * twice. Gives the topics the shop now sends there. Any refusal fails the connect with 502:
 * nothing is stored.
 */
export async function registerOrderWebhooks(
  config: ShopifyAdminConfig,
  shop: string,
  token: string,
  address: string,
): Promise<string[]> {
  const headers = { 'x-shopify-access-token': token };
  const listCheck = 'GET /admin/api/{version}/webhooks.json with the token';
  const list = await callShop(
    config,
    'GET',
    `${adminUrl(config, shop, 'webhooks.json')}?address=${encodeURIComponent(address)}&limit=250`,
    headers,
  );
  if (list?.status !== 200) throw shopUnreachable(shop, listCheck, list ? { status: list.status } : {});
  const have = new Set(
    (Array.isArray(list.body.webhooks) ? list.body.webhooks : [])
      .filter((w: { address?: unknown }) => w?.address === address)
      .map((w: { topic?: unknown }) => String(w?.topic)),
  );
  for (const topic of SHOPIFY_ORDER_TOPICS) {
    if (have.has(topic)) continue;
    const check = `POST /admin/api/{version}/webhooks.json (${topic}) with the token`;
    const answer = await callShop(config, 'POST', adminUrl(config, shop, 'webhooks.json'), headers, {
      webhook: { topic, address, format: 'json' },
    });
    if (answer?.status !== 201)
      throw providerFailed(
        `Shopify did not register ${shop}'s ${topic} webhook, so nothing was connected${answer ? `: ${shopifyReason(answer.body, answer.status)}` : ''}`,
        { provider: 'shopify', external_id: shop, check, ...(answer ? { status: answer.status } : {}) },
      );
  }
  return [...SHOPIFY_ORDER_TOPICS];
}

/**
 * The daily connection check's question: does the token still act for the shop? `ok`, or
 * Shopify's reason it does not (revoked, uninstalled, another shop's). Throws 502 provider_error
 * when Shopify could not be asked: an outage is not a reason to ask for a reconnect.
 */
export async function checkShopifyToken(
  config: ShopifyAdminConfig,
  shop: string,
  token: string,
): Promise<{ ok: true; name: string | null } | { ok: false; reason: string }> {
  const read = await readShop(config, shop, token, SHOP_CHECK);
  if (!read.ok) return { ok: false, reason: `Shopify refused the token: ${read.reason}` };
  if (read.shop.myshopify_domain !== shop)
    return { ok: false, reason: `The token now acts for ${read.shop.myshopify_domain || 'another shop'}` };
  return { ok: true, name: read.shop.name };
}

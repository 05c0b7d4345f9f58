// Shopify's Admin API as the service asks it, against the fake Shopify over real HTTP: a pasted
// token proves its shop only when shop.json read with it is that shop (another shop's token, a
// wrong one: 403 account_not_verified naming the check, and no webhook registered); a proven one
// registers the order webhooks once however often it reconnects; Shopify down or unreachable is
// 502 provider_error; the connection check tells a working token from a revoked one (uninstall)
// and from an outage. The install's callback hmac is Shopify's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkShopifyToken,
  proveShopifyAccount,
  registerOrderWebhooks,
  type ShopifyAdminConfig,
} from '../../src/channels/shopify-admin.ts';
import { exchangeCode, verifyCallback } from '../../src/channels/shopify-oauth.ts';
import { type FakeShopify, signRedirect, startFakeShopify } from '../../src/dev/fake-shopify/server.ts';
import type { AppError } from '../../src/platform/errors.ts';

const APP = { apiKey: 'client-id', apiSecret: 'app-secret' };
const SHOP = 'jane-supplies.myshopify.com';
const OTHER = 'someone-else.myshopify.com';
const ADDRESS = 'https://svc.example.test/functions/v1/shopify-webhook';
let fake: FakeShopify;
let config: ShopifyAdminConfig;

beforeAll(async () => {
  fake = await startFakeShopify({
    app: APP,
    shops: {
      [SHOP]: {
        owner: 'jane@example.test',
        name: 'Jane Supplies',
        customApps: [{ token: 'shpat_jane', secret: 'jane-secret' }],
      },
      [OTHER]: { owner: 'eve@example.test', customApps: [{ token: 'shpat_eve', secret: 'eve-secret' }] },
    },
  });
  config = { shopUrl: fake.shopUrl, apiVersion: '2026-10', timeoutMs: 2000, webhookAddress: ADDRESS };
});
afterAll(() => fake?.close());

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: AppError) => ({ status: e.status, code: e.code, message: e.message, details: e.details }),
  );

describe('a pasted token', () => {
  it('another shop’s token or a wrong one is 403 account_not_verified, with Shopify’s reason and no webhook registered', async () => {
    const check = 'GET /admin/api/{version}/shop.json with the token';
    for (const token of ['shpat_eve', 'shpat_made_up']) {
      expect(
        await refusal(
          proveShopifyAccount(config, { shop: SHOP, access_token: token, webhook_secret: 'eve-secret' }),
        ),
      ).toEqual({
        status: 403,
        code: 'account_not_verified',
        message: `Shopify says this token can't act for ${SHOP}: [API] Invalid API key or access token (unrecognized login or wrong password)`,
        details: { provider: 'shopify', external_id: SHOP, check },
      });
    }
    expect(fake.webhooks(SHOP)).toEqual([]);
    // A host that is not a shop is never called: the token cannot be sent anywhere a caller names.
    const asked = fake.requests.length;
    expect(
      await refusal(
        proveShopifyAccount(config, {
          shop: 'evil.example.com',
          access_token: 'shpat_jane',
          webhook_secret: null,
        }),
      ),
    ).toMatchObject({ status: 400, code: 'validation_error' });
    expect(fake.requests.length).toBe(asked);
    const shopRead = fake.requests.find((r) => r.path === '/admin/api/2026-10/shop.json');
    expect(shopRead?.headers['x-shopify-access-token']).toBe('shpat_eve');
    expect(shopRead?.query).toEqual({});
  });

  it('the shop’s own token proves it and registers each order topic once, however often it reconnects', async () => {
    const proof = await proveShopifyAccount(config, {
      shop: SHOP,
      access_token: 'shpat_jane',
      webhook_secret: 'jane-secret',
    });
    expect(proof).toEqual({
      provider: 'shopify',
      external_id: SHOP,
      name: 'Jane Supplies',
      access_token: 'shpat_jane',
      webhook_secret: 'jane-secret',
      token_expires_at: null,
      verified_by: 'token',
    });
    await proveShopifyAccount(config, {
      shop: SHOP,
      access_token: 'shpat_jane',
      webhook_secret: 'jane-secret',
    });
    expect(fake.webhooks(SHOP).map((w) => `${w.topic} ${w.address} ${w.api_version}`)).toEqual(
      ['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled', 'orders/fulfilled'].map(
        (t) => `${t} ${ADDRESS} 2026-10`,
      ),
    );
  });

  it('Shopify failing or out of reach is 502 provider_error; nothing is registered', async () => {
    fake.failNext(1, 503);
    expect(
      await refusal(
        proveShopifyAccount(config, { shop: OTHER, access_token: 'shpat_eve', webhook_secret: 'eve-secret' }),
      ),
    ).toMatchObject({
      status: 502,
      code: 'provider_error',
      details: { provider: 'shopify', external_id: OTHER, status: 503 },
    });
    // A registration Shopify refuses fails the connect too.
    fake.failNext(1, 500);
    expect(await refusal(registerOrderWebhooks(config, OTHER, 'shpat_eve', ADDRESS))).toMatchObject({
      status: 502,
      code: 'provider_error',
      details: { check: 'GET /admin/api/{version}/webhooks.json with the token', status: 500 },
    });
    const closed = await startFakeShopify();
    const gone = { ...config, shopUrl: closed.shopUrl };
    await closed.close();
    expect(
      await refusal(
        proveShopifyAccount(gone, { shop: OTHER, access_token: 'shpat_eve', webhook_secret: null }),
      ),
    ).toMatchObject({
      status: 502,
      code: 'provider_error',
      message: `Shopify could not be asked about ${OTHER}; try again in a moment`,
    });
    expect(fake.webhooks(OTHER)).toEqual([]);
  });
});

describe('the installed app’s token', () => {
  async function install(shop: string) {
    const q = new URLSearchParams({
      client_id: APP.apiKey,
      scope: 'read_orders',
      redirect_uri: 'https://svc.example.test/app/accounts/shopify',
      state: 's1',
    });
    const res = await fetch(`${fake.url}/${shop}/admin/oauth/authorize/approve`, {
      method: 'POST',
      body: q,
      redirect: 'manual',
    });
    const query = Object.fromEntries(new URL(res.headers.get('location') as string).searchParams);
    expect(verifyCallback(query, APP.apiSecret)).toBe(true);
    expect(verifyCallback({ ...query, shop: OTHER }, APP.apiSecret)).toBe(false);
    expect(verifyCallback(query, 'another-secret')).toBe(false);
    return exchangeCode(config, APP, shop, query.code as string);
  }

  it('works until the merchant uninstalls the app; the check says why it stopped, and an outage is not a reason', async () => {
    const { access_token } = await install(SHOP);
    expect(await checkShopifyToken(config, SHOP, access_token)).toEqual({ ok: true, name: 'Jane Supplies' });
    expect(await checkShopifyToken(config, OTHER, access_token)).toMatchObject({ ok: false });
    fake.failNext(1, 502);
    expect(await refusal(checkShopifyToken(config, SHOP, access_token))).toMatchObject({
      status: 502,
      code: 'provider_error',
    });
    fake.uninstall(SHOP);
    expect(await checkShopifyToken(config, SHOP, access_token)).toEqual({
      ok: false,
      reason:
        'Shopify refused the token: [API] Invalid API key or access token (unrecognized login or wrong password)',
    });
  });

  it('signs its redirect as Shopify does: sorted name=value pairs without hmac, hex HMAC-SHA256', () => {
    // Shopify's documented example (shopify.dev, "Verify a request").
    const query = {
      code: '0907a61c0c8d55e99db179b68161bc00',
      shop: 'some-shop.myshopify.com',
      state: '0.6784241404160823',
      timestamp: '1337178173',
    };
    const hmac = '700e2dadb827fcc8609e9d5ce208b2e9cdaab9df07390d2cbca10d7c328fc4bf';
    expect(signRedirect(query, 'hush')).toBe(hmac);
    expect(verifyCallback({ ...query, hmac }, 'hush')).toBe(true);
  });
});

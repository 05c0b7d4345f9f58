// Install on Shopify over HTTP, against the fake Shopify: the shop is connected only when Shopify's
// redirect is signed with the app's secret, names the shop the install was started for, and
// carries the caller's own unused, unexpired state and a code Shopify still takes; then the
// order webhooks are registered there, and deliveries signed with the app's secret (the account
// has no secret of its own) become orders. Every refusal stores nothing.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeShopify, signRedirect } from '../../src/dev/fake-shopify/server.ts';
import { call, inviteAndAccept, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import type { TestService } from '../helpers/service.ts';
import { countOf, processPending } from './meta.ts';
import { SHOPIFY_APP, shopifyOrder, startShopifyService } from './shopify.ts';

let svc: TestService;
let fake: FakeShopify;
let stop: () => Promise<void>;
let owner: Session;
let seq = 0;

const shopName = (label: string) => `${label}-${process.pid}-${++seq}.myshopify.com`;
const accountsOf = (shop: string) =>
  countOf(svc, "app.connected_accounts where provider = 'shopify' and external_id = $1", [shop]);

beforeAll(async () => {
  ({ svc, fake, stop } = await startShopifyService());
  owner = await signUp(svc, 'Jane Supplies');
  await setPlan(svc, owner, 'growth');
});
afterAll(() => stop?.());

/** A shop at the fake, owned by the merchant who clicks its buttons. */
function newShop(label: string) {
  const shop = shopName(label);
  fake.setShop(shop, { owner: `merchant@${shop}`, name: `Shop ${label}` });
  return shop;
}

const start = (token: string, shop: string) =>
  call(svc, 'POST', '/functions/v1/connect-shopify/start', { token, body: { shop } });

/**
 * The browser's trip through Shopify: opens the install page the service sent it to and presses
 * a button there (each a plain form post of the page's fields). Install answers with Shopify's
 * redirect to the app; its query comes back.
 */
async function atShopify(authorizeUrl: string, button: 'Install' | 'Cancel') {
  const page = await fetch(authorizeUrl);
  const html = await page.text();
  expect(page.status).toBe(200);
  expect(html).toContain(`<button type="submit">${button}</button>`);
  const url = new URL(authorizeUrl);
  const action = `${url.origin}${url.pathname}/${button === 'Install' ? 'approve' : 'cancel'}`;
  const res = await fetch(action, { method: 'POST', body: url.searchParams, redirect: 'manual' });
  const location = res.headers.get('location');
  return {
    status: res.status,
    text: await res.text(),
    query: location ? Object.fromEntries(new URL(location).searchParams) : null,
  };
}

const finish = (token: string, query: Record<string, string>) =>
  call(svc, 'POST', '/functions/v1/connect-shopify/callback', { token, body: { query } });

async function installed(token: string, shop: string) {
  const started = await start(token, shop);
  expect(started.status).toBe(200);
  const back = await atShopify(started.json.authorize_url, 'Install');
  expect(back.status).toBe(302);
  return back.query as Record<string, string>;
}

describe('Install on Shopify', () => {
  it('installs, registers the order webhooks, and the app-signed deliveries become the organization’s orders', async () => {
    const settings = await call(svc, 'GET', '/functions/v1/connect-shopify', { token: owner.access_token });
    expect(settings.json).toEqual({
      configured: true,
      message: null,
      redirect_url: `${svc.url}/app/accounts/shopify`,
      scopes: ['read_orders'],
    });
    const shop = newShop('install');
    const started = await start(owner.access_token, shop.replace('.myshopify.com', ''));
    expect(started.status).toBe(200);
    const to = new URL(started.json.authorize_url);
    expect(`${to.origin}${to.pathname}`).toBe(`${fake.url}/${shop}/admin/oauth/authorize`);
    expect(Object.fromEntries(to.searchParams)).toEqual({
      client_id: SHOPIFY_APP.apiKey,
      scope: 'read_orders',
      redirect_uri: `${svc.url}/app/accounts/shopify`,
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const back = await atShopify(started.json.authorize_url, 'Install');
    expect(Object.keys(back.query ?? {}).sort()).toEqual([
      'code',
      'hmac',
      'host',
      'shop',
      'state',
      'timestamp',
    ]);

    const r = await finish(owner.access_token, back.query as Record<string, string>);
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      provider: 'shopify',
      external_id: shop,
      name: 'Shop install',
      status: 'connected',
      verified_by: 'oauth',
      webhook_topics: [
        'orders/create',
        'orders/updated',
        'orders/paid',
        'orders/cancelled',
        'orders/fulfilled',
      ],
    });
    const [row] = await svc.services.db.query<Record<string, unknown>>(
      `select organization_id, verified_by, has_webhook_secret, verified_at is not null as verified
         from app.connected_accounts where id = $1`,
      [r.json.id],
    );
    expect(row).toEqual({
      organization_id: orgOf(owner),
      verified_by: 'oauth',
      has_webhook_secret: false,
      verified: true,
    });
    // Registered at Shopify with the installed app's token, to this service's receiver.
    expect(fake.webhooks(shop).map((w) => [w.topic, w.address])).toEqual(
      r.json.webhook_topics.map((t: string) => [t, `${svc.url}/functions/v1/shopify-webhook`]),
    );

    const orderId = `${5_940_139_491_235_000_000n + BigInt(process.pid)}`;
    const [delivered] = await fake.deliver(shop, 'orders/create', shopifyOrder({ id: orderId }));
    expect(delivered).toMatchObject({ status: 200, text: '{"received":true}' });
    expect(delivered?.headers['x-shopify-hmac-sha256']).toMatch(/=$/);
    await processPending(svc);
    const orders = await svc.services.db.query('select organization_id from orders where external_id = $1', [
      orderId,
    ]);
    expect(orders).toEqual([{ organization_id: orgOf(owner) }]);
  });

  it('a redirect not signed with the app’s secret is refused, stores nothing, and leaves the state usable', async () => {
    const shop = newShop('forged');
    const query = await installed(owner.access_token, shop);
    const forged = [
      { ...query, hmac: signRedirect(query, 'another-apps-secret') },
      { ...query, timestamp: String(Number(query.timestamp) + 1) },
      { ...query, hmac: 'zz' },
      Object.fromEntries(Object.entries(query).filter(([k]) => k !== 'hmac')),
    ];
    for (const q of forged) {
      const r = await finish(owner.access_token, q);
      expect(r.status).toBe(400);
      expect(r.json).toEqual({
        error: 'invalid_callback',
        message: 'This install link was not signed by Shopify: start installing again from the dashboard',
        details: {},
      });
    }
    expect(await accountsOf(shop)).toBe(0);
    expect((await finish(owner.access_token, query)).status).toBe(201);
  });

  it('an install on another shop than the one started for is refused (the state is spent)', async () => {
    const mine = newShop('mine');
    const theirs = newShop('theirs');
    const started = await start(owner.access_token, mine);
    const state = new URL(started.json.authorize_url).searchParams.get('state') as string;
    // The same state taken to another shop's install page: Shopify signs that shop's redirect.
    const elsewhere = await installed(owner.access_token, theirs);
    const url = new URL(started.json.authorize_url.replace(mine, theirs));
    url.searchParams.set('state', state);
    const back = await atShopify(url.toString(), 'Install');
    expect(back.query?.shop).toBe(theirs);
    const r = await finish(owner.access_token, back.query as Record<string, string>);
    expect(r).toMatchObject({ status: 400, json: { error: 'invalid_callback' } });
    expect(r.json.message).toContain(`installed on ${theirs}, not on the shop you started with`);
    expect(await accountsOf(theirs)).toBe(0);
    expect(await accountsOf(mine)).toBe(0);
    // Its own install of that shop still works.
    expect((await finish(owner.access_token, elsewhere)).status).toBe(201);
  });

  it('a used, another person’s or expired state is 400 invalid_state and connects nothing', async () => {
    const invalidState = {
      error: 'invalid_state',
      message: 'This sign-in link has expired or was already used: start connecting the account again',
      details: {},
    };
    // Used: the same redirect posted twice.
    const once = newShop('once');
    const query = await installed(owner.access_token, once);
    expect((await finish(owner.access_token, query)).status).toBe(201);
    expect(await finish(owner.access_token, query)).toMatchObject({ status: 400, json: invalidState });
    expect(await accountsOf(once)).toBe(1);

    // Another person of the same organization, even an admin, cannot finish the owner's install.
    const admin = await signUp(svc);
    const adminToken = await inviteAndAccept(svc, owner, admin, 'admin');
    const shared = newShop('shared');
    const owners = await installed(owner.access_token, shared);
    expect(await finish(adminToken, owners)).toMatchObject({ status: 400, json: invalidState });
    // ...and the state it saw is spent for the owner too.
    expect(await finish(owner.access_token, owners)).toMatchObject({ status: 400, json: invalidState });
    expect(await accountsOf(shared)).toBe(0);

    // Expired: older than the time a person has to finish.
    const late = newShop('late');
    const lateQuery = await installed(owner.access_token, late);
    const hash = createHash('sha256')
      .update(lateQuery.state as string)
      .digest('hex');
    await svc.services.db.query(
      "update app.connect_states set expires_at = now() - interval '1 second' where state_hash = $1",
      [hash],
    );
    expect(await finish(owner.access_token, lateQuery)).toMatchObject({ status: 400, json: invalidState });
    expect(await accountsOf(late)).toBe(0);
  });

  it('a code Shopify already exchanged is refused: 403 account_not_verified naming the check', async () => {
    const shop = newShop('code');
    const first = await installed(owner.access_token, shop);
    expect((await finish(owner.access_token, first)).status).toBe(201);
    // A fresh state of the caller's, the used code, and a redirect correctly signed for both.
    const again = await start(owner.access_token, shop);
    const state = new URL(again.json.authorize_url).searchParams.get('state') as string;
    const replay: Record<string, string> = { ...first, state };
    delete replay.hmac;
    replay.hmac = signRedirect(replay, SHOPIFY_APP.apiSecret);
    const r = await finish(owner.access_token, replay);
    expect(r.status).toBe(403);
    expect(r.json).toEqual({
      error: 'account_not_verified',
      message: `Shopify says this token can't act for ${shop}: The authorization code was not found or was already used`,
      details: {
        provider: 'shopify',
        external_id: shop,
        check: 'POST /admin/oauth/access_token with the code',
      },
    });
    expect(JSON.stringify(r.json)).not.toContain(SHOPIFY_APP.apiSecret);
    expect(await accountsOf(shop)).toBe(1);
  });

  it('Cancel at Shopify sends nothing back: no code, no account', async () => {
    const shop = newShop('cancel');
    const started = await start(owner.access_token, shop);
    const back = await atShopify(started.json.authorize_url, 'Cancel');
    expect(back).toMatchObject({ status: 200, query: null });
    expect(back.text).toContain('The app was not installed.');
    expect(fake.requests.filter((r) => r.shop === shop && r.path === '/admin/oauth/access_token')).toEqual(
      [],
    );
    expect(await accountsOf(shop)).toBe(0);
  });

  it('only owners and admins start an install, for a well-formed shop', async () => {
    const member = await signUp(svc);
    const memberToken = await inviteAndAccept(svc, owner, member, 'member');
    const refused = await start(memberToken, newShop('member'));
    expect(refused).toMatchObject({
      status: 403,
      json: { message: 'Only owners and admins may connect accounts' },
    });
    for (const shop of ['', 'not a shop', 'shop.example.com', 'a_b.myshopify.com']) {
      const r = await start(owner.access_token, shop);
      expect(r).toMatchObject({ status: 400, json: { error: 'validation_error' } });
    }
    const malformed = await call(svc, 'POST', '/functions/v1/connect-shopify/callback', {
      token: owner.access_token,
      body: { query: 'code=1' },
    });
    expect(malformed).toMatchObject({ status: 400, json: { error: 'validation_error' } });
  });
});

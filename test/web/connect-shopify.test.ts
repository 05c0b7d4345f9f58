// Install on Shopify in the dashboard, through the fake Shopify in Chromium: the owner names their
// shop, approves the app on Shopify's install page, comes back to the dashboard, and the shop is
// connected (by OAuth, its order webhooks registered) and listed.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type FakeShopify, startFakeShopify } from '../../src/dev/fake-shopify/server.ts';
import {
  DESKTOP,
  describeBrowser,
  expectCleanPage,
  goTo,
  openPage,
  shows,
  signUpInDashboard,
  startDashboard,
} from '../helpers/browser.ts';
import type { TestService } from '../helpers/service.ts';
import { SHOPIFY_APP, SHOPIFY_ENV } from '../webhooks/shopify.ts';

let svc: TestService;
let browser: Browser;
let fake: FakeShopify;
let stopDashboard: () => Promise<void>;
const SHOP = `browser-${process.pid}.myshopify.com`;

beforeAll(async () => {
  fake = await startFakeShopify({
    app: SHOPIFY_APP,
    shops: { [SHOP]: { owner: 'merchant@browser.test', name: 'Browser Boutique' } },
  });
  ({
    svc,
    browser,
    stop: stopDashboard,
  } = await startDashboard({
    ...SHOPIFY_ENV,
    SHOPIFY_SHOP_URL: fake.shopUrl,
    SHOPIFY_API_KEY: SHOPIFY_APP.apiKey,
    SHOPIFY_API_SECRET: SHOPIFY_APP.apiSecret,
  }));
});
afterAll(async () => {
  await stopDashboard?.();
  await fake?.close();
});

describeBrowser('Install on Shopify', () => {
  test('the owner installs the app on their shop and comes back to it connected', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Browser Boutique');
    await goTo(page, 'Connected accounts');
    await page.getByLabel('Your Shopify shop').fill(SHOP.replace('.myshopify.com', ''));
    await page.getByRole('button', { name: 'Install on Shopify' }).click();

    // Shopify's page: what the app asks for, on which shop, and the merchant's choice.
    await shows(page.getByRole('heading', { name: 'Install app on Browser Boutique' }));
    expect(await page.getByRole('listitem').allTextContents()).toEqual(['read_orders']);
    await page.getByRole('button', { name: 'Install' }).click();

    await shows(page.getByText(`Connected Browser Boutique (${SHOP}).`));
    expect(new URL(page.url()).pathname).toBe('/app/accounts/shopify');
    // The query Shopify sent is gone from the address bar: a reload sends nothing again.
    expect(new URL(page.url()).search).toBe('');
    await expectCleanPage(page);

    await page.getByRole('link', { name: 'Back to connected accounts' }).click();
    await shows(page.getByRole('cell', { name: SHOP }));
    await shows(page.getByRole('cell', { name: 'Browser Boutique' }));
    expect(fake.webhooks(SHOP).map((w) => w.topic)).toContain('orders/create');
    await context.close();
  });
});

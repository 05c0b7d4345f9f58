// Connecting accounts by signing in with Meta, clicked through in Chromium against the fake Graph
// API's dialogs (src/dev/fake-graph/oauth.ts): "Connect with Facebook" (the dialog, back to the
// dashboard, the Page picker), "Connect WhatsApp" (Embedded Signup in a popup that reports to
// the page that opened it) and "Connect Instagram"; a sign-in cancelled at Meta says so.

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import {
  describeBrowser,
  expectCleanPage,
  goTo,
  openPage,
  shows,
  signUpInDashboard,
  startDashboard,
} from '../helpers/browser.ts';
import type { TestService } from '../helpers/service.ts';

const APP = { id: '4242424242', secret: 'meta-app-secret-browser-01' };
const IG_APP = { id: '7373737373', secret: 'instagram-app-secret-browser' };

let fake: FakeGraph;
let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  fake = await startFakeGraph({
    apps: { meta: APP, instagram: IG_APP },
    persons: [
      {
        name: 'Dana Owner',
        pages: [
          { id: '201001', name: 'Dana’s Bakery', instagram: { id: '278400001', username: 'danasbakery' } },
          { id: '201002', name: 'Dana’s Café' },
        ],
        wabas: [
          {
            id: '320001',
            phone_numbers: [
              { id: '420001', display_phone_number: '+1 555-0101', verified_name: 'Dana WhatsApp' },
            ],
          },
        ],
        instagram: { id: '278499999', username: 'dana.ig' },
      },
    ],
  });
  ({ svc, browser, stop } = await startDashboard({
    META_GRAPH_URL: fake.url,
    META_INSTAGRAM_GRAPH_URL: fake.url,
    META_DIALOG_URL: fake.url,
    META_APP_ID: APP.id,
    META_APP_SECRET: APP.secret,
    META_WHATSAPP_CONFIG_ID: '5550001',
    INSTAGRAM_APP_ID: IG_APP.id,
    INSTAGRAM_APP_SECRET: IG_APP.secret,
    INSTAGRAM_AUTHORIZE_URL: fake.url,
    INSTAGRAM_API_URL: fake.url,
  }));
});
afterAll(async () => {
  await stop?.();
  await fake?.close();
});

describeBrowser('connecting accounts by signing in with Meta', () => {
  test('Facebook with the Page picker, WhatsApp in a popup, and Instagram', async () => {
    const { context, page } = await openPage(browser);
    await signUpInDashboard(svc, page, 'Sign-in bakery');
    await goTo(page, 'Connected accounts');

    // Facebook: to the dialog, Continue, back to the dashboard's picker.
    await page.getByRole('button', { name: 'Connect with Facebook' }).click();
    await shows(page.getByText('Signed in as'));
    expect(page.url()).toContain(`${fake.url}/v26.0/dialog/oauth`);
    await page.getByRole('button', { name: 'Continue' }).click();
    await shows(page.getByRole('checkbox', { name: 'Facebook Page Dana’s Bakery' }));
    expect(page.url()).toContain('/app/accounts/connect/facebook');
    await page.getByRole('checkbox', { name: 'Facebook Page Dana’s Bakery' }).check();
    await page.getByRole('checkbox', { name: /Instagram @danasbakery/ }).check();
    await page.getByRole('button', { name: 'Connect selected' }).click();
    await shows(page.getByRole('status').filter({ hasText: 'Connected Dana’s Bakery, danasbakery.' }));
    await expectCleanPage(page);
    await page.getByRole('link', { name: 'Back to connected accounts' }).click();
    await shows(page.getByRole('cell', { name: '201001' }));
    await shows(page.getByRole('cell', { name: '278400001' }));

    // WhatsApp: Embedded Signup in a popup; the page that opened it finishes.
    const [popup] = await Promise.all([
      page.waitForEvent('popup'),
      page.getByRole('button', { name: 'Connect WhatsApp' }).click(),
    ]);
    await popup.getByRole('button', { name: 'Continue' }).click();
    await shows(page.getByRole('status').filter({ hasText: 'Connected WhatsApp Dana WhatsApp.' }));
    await shows(page.getByRole('cell', { name: '420001' }));

    // Instagram: its own window and app.
    await page.getByRole('button', { name: 'Connect Instagram' }).click();
    await shows(page.getByRole('heading', { name: /Log in to Instagram/ }));
    await page.getByRole('button', { name: 'Continue' }).click();
    await shows(page.getByRole('status').filter({ hasText: 'Connected dana.ig.' }));
    await expectCleanPage(page);
    await page.getByRole('link', { name: 'Back to connected accounts' }).click();
    await shows(page.getByRole('cell', { name: '278499999' }));
    await expectCleanPage(page);
    await context.close();
  });

  test('a sign-in cancelled at Facebook says so and connects nothing', async () => {
    const { context, page } = await openPage(browser, undefined, { expectedStatuses: [400] });
    await signUpInDashboard(svc, page, 'Sign-in cancelled');
    await goTo(page, 'Connected accounts');
    await page.getByRole('button', { name: 'Connect with Facebook' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await shows(page.getByRole('alert').filter({ hasText: /cancelled at Meta, so nothing was connected/ }));
    await page.getByRole('link', { name: 'Back to connected accounts' }).click();
    await shows(page.getByText('No accounts connected yet'));
    await expectCleanPage(page);
    await context.close();
  });
});

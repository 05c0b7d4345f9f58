// Connected accounts and webhook deliveries in the dashboard: an owner connects a WhatsApp number
// (its secrets never shown back), Meta delivers to it, a failed delivery is found by its status
// and replayed; an admin sees deliveries but the replay is the owners'.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { checkConnections } from '../../src/jobs/check-connections.ts';
import {
  DESKTOP,
  describeBrowser,
  eventually,
  expectCleanPage,
  goTo,
  openPage,
  PHONE,
  shows,
  signInToDashboard,
  startDashboard,
  type TestPage,
} from '../helpers/browser.ts';
import { inviteAndAccept, orgOf, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { connect } from '../helpers/send.ts';
import type { TestService } from '../helpers/service.ts';
import { deliver, fixture, META_ENV, processPending } from '../webhooks/meta.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard({ ...META_ENV }));
});
afterAll(() => stop?.());

const SECRET_TOKEN = 'EAAG-secret-token-never-shown';

async function connectWhatsApp(page: TestPage, phoneId: string) {
  await goTo(page, 'Connected accounts');
  await page.getByLabel('Provider').selectOption('whatsapp');
  await page.getByLabel('Phone number id').fill(phoneId);
  await page.getByLabel('Display name').fill('Shop line');
  await page.getByLabel('Access token').fill(SECRET_TOKEN);
  await page.getByLabel('Webhook secret').fill('whsec-never-shown');
  await page.getByRole('button', { name: 'Connect account' }).click();
  await shows(page.getByRole('status').filter({ hasText: `Connected whatsapp ${phoneId}` }));
  await shows(page.getByRole('cell', { name: phoneId }));
  // Write-only: the form is cleared and nothing of the secrets is on the page.
  expect(await page.getByLabel('Access token').inputValue()).toBe('');
  expect(await page.content()).not.toContain(SECRET_TOKEN);
  expect(await page.content()).not.toContain('whsec-never-shown');
}

describeBrowser('connected accounts and webhook deliveries', () => {
  for (const [label, viewport, n] of [
    ['desktop', DESKTOP, '1'],
    ['phone', PHONE, '2'],
  ] as const) {
    test(`an owner connects an account and replays a failed delivery (${label})`, async () => {
      const phoneId = `10833${process.pid}${n}`;
      const owner = await signUp(svc, `Deliveries ${label}`);
      const { context, page } = await openPage(browser, viewport);
      await signInToDashboard(svc, page, owner.user.email);
      await connectWhatsApp(page, phoneId);
      await expectCleanPage(page);

      for (const id of ['ONE', 'TWO']) {
        const body = fixture('wa-text', {
          PHONE_NUMBER_ID: phoneId,
          WA_ID: '14155550100',
          TEXT_ID: `${id}${n}`,
        });
        expect((await deliver(svc, body)).status).toBe(200);
      }
      await processPending(svc);
      await svc.services.db.query(
        `update app.webhook_events set status = 'failed', last_error = 'boom from the test' where id =
           (select id from app.webhook_events where organization_id = $1 order by received_at, id limit 1)`,
        [orgOf(owner)],
      );

      await goTo(page, 'Webhook deliveries');
      await shows(page.getByRole('cell', { name: 'boom from the test' }));
      await eventually(() => page.locator('table.data tbody tr').count()).toBe(2);
      await page.getByLabel('Status').selectOption('failed');
      await eventually(() => page.locator('table.data tbody tr').count()).toBe(1);
      await page.getByRole('button', { name: 'Replay whatsapp_business_account' }).click();
      await shows(page.getByRole('status').filter({ hasText: 'is queued again' }));
      await shows(page.getByText('No webhook deliveries match'));
      await page.getByLabel('Status').selectOption('pending');
      await eventually(() => page.locator('table.data tbody tr').count()).toBe(1);
      await expectCleanPage(page);

      // Disconnecting asks first; the service lists connected accounts only.
      await goTo(page, 'Connected accounts');
      await page.getByRole('button', { name: 'Disconnect Shop line' }).click();
      await page.getByRole('button', { name: 'Yes, disconnect' }).click();
      await shows(page.getByText('No accounts connected yet'));
      await expectCleanPage(page);
      await context.close();
    });
  }

  test('an account whose token stopped working: a banner on every page says why, and its Reconnect button leads to connecting it again, which clears it', async () => {
    const pageId = `10834${process.pid}`;
    const owner = await signUp(svc, 'Banner Shop');
    await setPlan(svc, owner, 'starter'); // the social calendar is on paid plans
    await connect(svc, owner, 'facebook', pageId, 'EAAG-banner-token-1');
    svc.openGraph?.revokeToken('EAAG-banner-token-1');
    await checkConnections(svc.services);

    const { context, page } = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, page, owner.user.email);
    const banner = page.getByRole('region', { name: 'Accounts to connect again' });
    // Named as Meta names the Page (the fake: "Page <id>").
    const flagged = new RegExp(`^The Facebook account .*${pageId} needs to be connected again\\.$`);
    await shows(banner.getByText(flagged));
    expect(await banner.textContent()).toContain('The session has been invalidated');
    // Also where sends and posts fail.
    for (const area of ['Inbox', 'Social calendar']) {
      await goTo(page, area);
      await shows(banner.getByText(flagged));
    }
    await expectCleanPage(page);
    await banner.getByRole('link', { name: new RegExp(`^Reconnect Facebook account .*${pageId}$`) }).click();
    await shows(page.getByRole('heading', { name: 'Connected accounts' }));
    expect(await page.getByLabel('Provider').inputValue()).toBe('facebook');
    await page.getByLabel('Page id').fill(pageId);
    await page.getByLabel('Access token').fill('EAAG-banner-token-2');
    await page.getByRole('button', { name: 'Connect account' }).click();
    await shows(page.getByRole('status').filter({ hasText: `Connected facebook ${pageId}` }));
    await eventually(() => banner.count()).toBe(0);
    await expectCleanPage(page);
    await context.close();
  });

  test('an admin’s refused connection shows the service’s reasons and keeps the form', async () => {
    const owner = await signUp(svc, 'Refusals');
    const admin = await signUp(svc);
    await inviteAndAccept(svc, owner, admin, 'admin');
    const { context, page } = await openPage(browser, DESKTOP, { expectedStatuses: [400] });
    await signInToDashboard(svc, page, admin.user.email);
    await goTo(page, 'Connected accounts');
    await page.getByLabel('Provider').selectOption('shopify');
    await page.getByLabel('Shop domain').fill('not a shop');
    await page.getByLabel('Access token').fill('shpat-token');
    await page.getByRole('button', { name: 'Connect account' }).click();
    await shows(page.getByRole('alert'));
    expect(await page.getByRole('alert').first().textContent()).toMatch(/shop domain|webhook_secret/i);
    expect(await page.getByLabel('Shop domain').inputValue()).toBe('not a shop');
    await expectCleanPage(page);
    await context.close();
  });

  test('a token Facebook refuses: the owner reads what to do, and nothing is connected', async () => {
    const owner = await signUp(svc, 'Refused token');
    const token = `EAAG-revoked-${process.pid}`;
    svc.openGraph?.revokeToken(token);
    const { context, page } = await openPage(browser, DESKTOP, { expectedStatuses: [403] });
    await signInToDashboard(svc, page, owner.user.email);
    await goTo(page, 'Connected accounts');
    await page.getByLabel('Provider').selectOption('facebook');
    await page.getByLabel('Page id').fill('1081234567');
    await page.getByLabel('Access token').fill(token);
    await page.getByRole('button', { name: 'Connect account' }).click();
    await shows(page.getByRole('alert'));
    expect(await page.getByRole('alert').first().textContent()).toBe(
      'Facebook says this token can’t act for Page 1081234567. Copy the Page’s token again, or use Connect with Facebook.',
    );
    await shows(page.getByText('No accounts connected yet'));
    expect(await page.content()).not.toContain(token);
    await context.close();
  });
});

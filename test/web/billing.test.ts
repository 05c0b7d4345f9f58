// The plan panel with billing on (docs/billing.md): an owner upgrades through Stripe Checkout,
// changes plan and cancels in the Customer Portal, all against the fake Stripe in Chromium; the
// plan shown follows Stripe's signed events. An admin sees the prices but no billing controls.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type FakeStripe, startFakeStripe } from '../../src/dev/fake-stripe/server.ts';
import { billingEnv, planOf, STRIPE_KEY, subscribe, WEBHOOK_SECRET } from '../helpers/billing.ts';
import {
  DESKTOP,
  describeBrowser,
  eventually,
  expectCleanPage,
  openPage,
  shows,
  signInToDashboard,
  startDashboard,
} from '../helpers/browser.ts';
import { inviteAndAccept, signUp } from '../helpers/http.ts';
import type { TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let fake: FakeStripe;
let stop: () => Promise<void>;

beforeAll(async () => {
  fake = await startFakeStripe({ secretKey: STRIPE_KEY, webhookSecret: WEBHOOK_SECRET });
  ({ svc, browser, stop } = await startDashboard(billingEnv(fake)));
  fake.webhookUrl = `${svc.url}/functions/v1/stripe-webhook`;
});
afterAll(async () => {
  await fake?.settled();
  await stop?.();
  await fake?.close();
});

/**
 * Waits for the plan panel to show `plan`; when it does not, fails with what the next engineer
 * needs to find why (the slow event has not been caught with its log yet): every stored Stripe
 * event with its status, attempts and last error, the fake's deliveries, and the service's
 * warnings and errors.
 */
async function planShown(page: Page, plan: RegExp) {
  try {
    await page.getByText(plan).first().waitFor({ state: 'visible', timeout: 150_000 });
  } catch (err) {
    const events = await svc.services.db.query(
      `select id, type, status, attempts, last_error, received_at, processed_at
         from app.stripe_events order by received_at`,
    );
    const deliveries = fake.deliveries.map((d) => `${d.event.type} ${d.status}`);
    const problems = svc.logLines().filter((l) => l.level >= 40);
    throw new Error(
      `${(err as Error).message}\nstripe events: ${JSON.stringify(events, null, 1)}\n` +
        `deliveries: ${deliveries.join(', ')}\nwarnings and errors: ${JSON.stringify(problems, null, 1)}`,
    );
  }
}

describeBrowser('billing in the dashboard', () => {
  test('an owner upgrades through Checkout; the plan changes when Stripe confirms', async () => {
    const owner = await signUp(svc, 'Paying Shop');
    const { context, page } = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, page, owner.user.email);
    await shows(page.getByText(/on the Free plan/));
    await shows(
      page.getByRole('list', { name: 'Plans and prices' }).getByText(/each additional agent \$5 a month/),
    );
    await expectCleanPage(page);

    await page.getByLabel('Plan to upgrade to').selectOption('growth');
    await page.getByRole('button', { name: 'Upgrade' }).click();
    // Stripe's hosted Checkout page (the fake's).
    await page.waitForURL(`${fake.url}/c/pay/**`);
    await shows(page.getByText('Growth × 1: $199.00 a month'));
    await page.getByRole('button', { name: 'Pay and subscribe' }).click();
    await page.waitForURL(`${svc.url}/app?billing=success`);
    await shows(page.getByRole('status').filter({ hasText: 'as soon as Stripe confirms the payment' }));
    await shows(page.getByText(/on the Growth plan \(/));
    await shows(page.getByRole('button', { name: 'Manage billing' }));
    await expectCleanPage(page);
    await context.close();
  });

  test('an owner changes plan and cancels in the Customer Portal', async () => {
    const owner = await signUp(svc, 'Portal Shop');
    await subscribe(svc, fake, owner, 'growth');
    await expect.poll(() => planOf(svc, owner), { timeout: 15_000, interval: 100 }).toBe('growth');
    const { context, page } = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, page, owner.user.email);
    await shows(page.getByText(/on the Growth plan \(/));
    await page.getByRole('button', { name: 'Manage billing' }).click();
    await page.waitForURL(`${fake.url}/p/session/**`);
    await page.getByLabel('New plan').selectOption('price_scale');
    await page.getByRole('button', { name: 'Update plan' }).click();
    await shows(page.getByText('Current plan: Scale'));
    await page.getByRole('link', { name: 'Return to the service' }).click();
    await page.waitForURL(`${svc.url}/app?billing=returned`);
    // The update's event through the worker: once over 15 s in a full CI run (see the cancel below).
    await planShown(page, /on the Scale plan \(/);

    await page.getByRole('button', { name: 'Manage billing' }).click();
    await page.waitForURL(`${fake.url}/p/session/**`);
    await page.getByRole('button', { name: 'Cancel subscription' }).click();
    await shows(page.getByText('No active subscription.'));
    await page.getByRole('link', { name: 'Return to the service' }).click();
    // Two Stripe events in a row (the update, then the cancel), each a job the worker takes. In
    // full CI runs the cancel's plan was not there within 60 s twice in three runs (never when
    // the file runs alone, even beside stress-ng), as if its first attempt failed and waited for
    // the 15 s retry: waited for as long as the page keeps asking, not timed. Not understood yet.
    await planShown(page, /on the Free plan \(/);
    await shows(page.getByRole('button', { name: 'Upgrade' }));
    await expectCleanPage(page);
    await context.close();
  }, 350_000);

  test('an admin sees the plan and prices but no billing controls', async () => {
    const owner = await signUp(svc, 'Admin Looks Shop');
    const admin = await signUp(svc);
    await inviteAndAccept(svc, owner, admin, 'admin');
    const { context, page } = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, page, admin.user.email);
    await shows(page.getByText('Only owners manage billing.'));
    await shows(page.getByRole('list', { name: 'Plans and prices' }));
    await shows(page.getByText('Free: $0 a month, 1 agent included'));
    expect(await page.getByRole('button', { name: 'Upgrade' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Manage billing' }).count()).toBe(0);
    await eventually(() => page.getByText(/on the Free plan/).count()).toBeGreaterThan(0);
    await expectCleanPage(page);
    await context.close();
  });
});

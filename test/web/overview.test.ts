import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  eventually,
  expectCleanPage,
  openPage,
  PHONE,
  shows,
  signInToDashboard,
  signUpInDashboard,
  startDashboard,
} from '../helpers/browser.ts';
import { call, inviteAndAccept, orgOf, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import type { TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard({ BILLING_CONTACT: 'plans@operator.example' }));
});
afterAll(() => stop?.());

/** An organization with 40 of the free plan's 50 contacts and one order, seeded over the API. */
async function busyOrganization(name: string) {
  const owner = await signUp(svc, name);
  const contacts = Array.from({ length: 40 }, (_, i) => ({ first_name: `Seed ${i}` }));
  const seeded = await call(svc, 'POST', '/rest/v1/contacts', { token: owner.access_token, body: contacts });
  expect(seeded.status).toBe(201);
  const order = await call(svc, 'POST', '/rest/v1/orders', {
    token: owner.access_token,
    body: { notes: 'today' },
  });
  expect(order.status).toBe(201);
  return owner;
}

describeBrowser('the overview', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`the meters warn at 80 %, and the owner sees whom to ask for another plan (${label})`, async () => {
      const owner = await busyOrganization(`Meters ${label}`);
      const { context, page } = await openPage(browser, viewport);
      await signInToDashboard(svc, page, owner.user.email);
      await shows(page.getByRole('heading', { name: 'Overview' }));
      // agent-usage's own words: the warning and the upgrade guidance.
      await shows(page.getByText('contacts: 40 of 50 used (80%)'));
      // Guidance in the owner's words: no "A person must upgrade the plan" for the person who can.
      await shows(page.getByText('The Starter plan raises the limits for contacts.'));
      expect(await page.getByText(/A person must upgrade|recommended plan/).count()).toBe(0);
      // The default warehouse the service created is the free plan's one: no warning for it.
      expect(await page.getByText(/warehouses: 1 of 1/).count()).toBe(0);
      await shows(page.getByRole('meter', { name: 'Contacts' }));
      expect(await page.getByRole('meter', { name: 'Contacts' }).getAttribute('value')).toBe('40');
      await eventually(() => page.getByRole('region', { name: 'Orders today' }).textContent()).toContain('1');
      await shows(page.getByText('Nothing scheduled'));
      await expectCleanPage(page);

      // No billing here: the plan, its prices, and whom to ask; no control that would change it.
      await shows(
        page.getByText(/Plans are changed by whoever runs this service \(plans@operator\.example\)/),
      );
      await shows(
        page.getByRole('list', { name: 'Plans and prices' }).getByText(/each additional agent \$10 a month/),
      );
      expect(await page.getByRole('button', { name: 'Upgrade' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Change plan' }).count()).toBe(0);
      await expectCleanPage(page);
      // The operator moves it; the dashboard shows it.
      await setPlan(svc, owner, 'starter');
      await page.reload();
      await shows(page.getByText(/on the Starter plan \(/));
      await eventually(() => page.getByText('contacts: 40 of 50 used (80%)').count()).toBe(0);
      await expectCleanPage(page);
      await context.close();
    });
  }

  test('an admin sees the plan but no billing; the service refuses plan changes from people', async () => {
    const owner = await busyOrganization('Plan rules');
    const admin = await signUp(svc);
    const adminToken = await inviteAndAccept(svc, owner, admin, 'admin');
    const member = await signUp(svc);
    await inviteAndAccept(svc, owner, member, 'member');

    const { context, page } = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, page, admin.user.email);
    await shows(page.getByText('contacts: 40 of 50 used (80%)'));
    await shows(page.getByText(/Plans are changed by whoever runs this service/));
    expect(await page.getByRole('button', { name: 'Upgrade' }).count()).toBe(0);
    await expectCleanPage(page);
    // The control's absence is not the guard: the service refuses an admin, and the owner, who ask anyway.
    for (const token of [adminToken, owner.access_token]) {
      const refused = await call(svc, 'POST', '/functions/v1/organization-plan', {
        token,
        body: { organization_id: orgOf(owner), plan: 'scale' },
      });
      expect(refused.status).toBe(403);
      expect(refused.json.error).toBe('forbidden');
    }
    await context.close();

    const asMember = await openPage(browser, PHONE);
    await signInToDashboard(svc, asMember.page, member.user.email);
    await shows(asMember.page.getByText(/on the Free plan/));
    expect(await asMember.page.getByRole('button', { name: 'Upgrade' }).count()).toBe(0);
    expect(await asMember.page.getByRole('meter').count()).toBe(0);
    await expectCleanPage(asMember.page);
    await asMember.context.close();
  });

  test('a new organization is not told on day one that it is near the plan’s limits', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Day one shop');
    await shows(page.getByRole('meter', { name: 'Warehouses' }));
    expect(await page.getByText('Near the plan’s limits').count()).toBe(0);
    expect(await page.locator('.meter.near').count()).toBe(0);
    // What the next plan adds is said to the owner, in their words.
    await shows(page.getByText(/On the Free plan AI agents can read your records but not change them/));
    expect(await page.getByText(/A person must/).count()).toBe(0);
    await expectCleanPage(page);
    await context.close();
  });
});

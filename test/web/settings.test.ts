import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  eventually,
  expectCleanPage,
  goTo,
  openPage,
  PHONE,
  shows,
  signUpInDashboard,
  startDashboard,
} from '../helpers/browser.ts';
import { call } from '../helpers/http.ts';
import type { TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

const exchange = (apiKey: string) =>
  call(svc, 'POST', '/functions/v1/agent-auth', { body: { api_key: apiKey } });

describeBrowser('agents and keys in the dashboard', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`a key is created and revoked (${label})`, async () => {
      // The revoked key's refused exchange is a 401 the test provokes over HTTP, not the page.
      const { context, page } = await openPage(browser, viewport);
      await signUpInDashboard(svc, page, `Keys ${label}`);
      await goTo(page, 'Agents and keys');
      await shows(page.getByText('No keys yet'));

      await page.getByLabel('Key name').fill('Order bot');
      await page.getByRole('button', { name: 'Create key' }).click();
      await shows(page.getByText('it will not be shown again'));
      const apiKey = await page.getByLabel('New API key').inputValue();
      expect(apiKey).toMatch(/^svc_ak_[A-Za-z0-9]{48}$/);
      await page.getByRole('button', { name: 'Copy key' }).click();
      await shows(page.getByRole('status').filter({ hasText: /Copied to the clipboard|copy it by hand/ }));
      // The form is empty again for the next key.
      expect(await page.getByLabel('Key name').inputValue()).toBe('');
      await shows(page.getByRole('cell', { name: 'Order bot' }));
      await expectCleanPage(page);

      const before = await exchange(apiKey);
      expect(before.status).toBe(200);

      // Leaving and coming back: the raw key is gone for good, the key stays listed.
      await goTo(page, 'Contacts');
      await goTo(page, 'Agents and keys');
      await shows(page.getByRole('cell', { name: 'Order bot' }));
      expect(await page.getByLabel('New API key').count()).toBe(0);
      expect(await page.getByText(apiKey).count()).toBe(0);
      await shows(page.getByRole('cell', { name: 'Success' }));

      await page.getByRole('button', { name: 'Revoke Order bot' }).click();
      await page.getByRole('button', { name: 'Yes, revoke' }).click();
      await shows(page.getByRole('cell', { name: 'Revoked' }));
      const after = await exchange(apiKey);
      expect(after.status).toBe(401);
      await page.reload();
      await shows(page.getByRole('cell', { name: 'Refused' }));
      await expectCleanPage(page);
      await context.close();
    });
  }

  test('a key past the plan’s ceiling shows the service’s refusal and keeps the form', async () => {
    const { context, page } = await openPage(browser, DESKTOP, { expectedStatuses: [403] });
    await signUpInDashboard(svc, page, 'Ceiling keys');
    await goTo(page, 'Agents and keys');
    // The free plan grants agents read only: a write key is made, with the service's warning.
    await page.getByLabel('Key name').fill('Writer');
    await page.getByRole('checkbox', { name: /write/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await shows(page.getByText(/Free plan gives agents only read access/));
    await shows(page.getByRole('cell', { name: 'Writer' }));

    // The free plan's one active key is taken: the second is refused, and nothing typed is lost.
    await page.getByLabel('Key name').fill('Admin bot');
    await page.getByRole('checkbox', { name: /admin/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await shows(page.getByRole('alert').filter({ hasText: /agents/i }));
    expect(await page.getByLabel('Key name').inputValue()).toBe('Admin bot');
    expect(await page.getByRole('checkbox', { name: /admin/ }).isChecked()).toBe(true);
    await eventually(() => page.getByRole('cell', { name: 'Admin bot' }).count()).toBe(0);
    await expectCleanPage(page);
    await context.close();
  });
});

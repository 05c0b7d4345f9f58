import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  eventually,
  expectCleanPage,
  goTo,
  inOrganization,
  openPage,
  PHONE,
  shows,
  signUpInDashboard,
  startDashboard,
} from '../helpers/browser.ts';
import { type TestService, uniqueEmail } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

describeBrowser('contacts in the dashboard', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`a new person signs up, creates an organization and adds and finds a contact (${label})`, async () => {
      const { context, page } = await openPage(browser, viewport);
      await signUpInDashboard(svc, page, `Shop ${label}`);
      await goTo(page, 'Contacts');
      await shows(page.getByText('No contacts match'));

      await page.getByRole('button', { name: 'New contact' }).click();
      await page.getByLabel('First name').fill('Ada');
      await page.getByLabel('Last name').fill('Lovelace');
      await page.getByLabel('Email').fill('ada@example.test');
      await page.getByLabel('Tags').fill('vip, wholesale');
      await page.getByRole('button', { name: 'Add contact' }).click();
      await shows(page.getByRole('heading', { name: 'Ada Lovelace' }));
      await expectCleanPage(page);

      await goTo(page, 'Contacts');
      await page.getByRole('searchbox', { name: 'Search' }).fill('lovel');
      await shows(page.getByRole('link', { name: 'Ada Lovelace' }));
      await page.getByRole('searchbox', { name: 'Search' }).fill('nobody');
      await shows(page.getByText('No contacts match'));
      await page.getByRole('searchbox', { name: 'Search' }).fill('');
      await page.getByRole('textbox', { name: 'Tag' }).fill('wholesale');
      await shows(page.getByRole('link', { name: 'Ada Lovelace' }));
      await expectCleanPage(page);
      await context.close();
    });
  }

  test('two filters changed at once both hold: the second change keeps the first', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Quick typist');
    await goTo(page, 'Contacts');
    await page.getByRole('button', { name: 'New contact' }).click();
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Tags').fill('vip');
    await page.getByRole('button', { name: 'Add contact' }).click();
    await shows(page.getByRole('heading', { name: 'Ada' }));
    await goTo(page, 'Contacts');
    await page.getByRole('searchbox', { name: 'Search' }).fill('nobody');
    await shows(page.getByText('No contacts match'));
    // Both inputs change in one task, before the URL (and the page) can catch up with the first.
    await page.evaluate(() => {
      const type = (input: HTMLInputElement, value: string) => {
        Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(input, value);
        input.dispatchEvent(new Event('input', { bubbles: true }));
      };
      type(document.querySelector('input[type=search]') as HTMLInputElement, '');
      type(document.querySelector('.filters input:not([type=search])') as HTMLInputElement, 'vip');
    });
    await shows(page.getByRole('link', { name: 'Ada' }));
    const url = new URL(page.url());
    expect([url.searchParams.get('q'), url.searchParams.get('tag')]).toEqual([null, 'vip']);
    await expectCleanPage(page);
    await context.close();
  });

  test('a refused contact shows the service’s reason and keeps what was typed', async () => {
    const { context, page } = await openPage(browser, DESKTOP, { expectedStatuses: [400] });
    await signUpInDashboard(svc, page, 'Typo shop');
    await goTo(page, 'Contacts');
    await page.getByRole('button', { name: 'New contact' }).click();
    await page.getByLabel('First name').fill('Grace');
    await page.getByLabel('Phone').fill('0044 not a phone');
    await page.getByRole('button', { name: 'Add contact' }).click();
    await shows(page.getByRole('alert').filter({ hasText: 'Enter the phone number with its country code' }));
    expect(await page.getByRole('alert').textContent()).not.toMatch(/CHECK|contacts_phone_check/);
    expect(await page.getByLabel('First name').inputValue()).toBe('Grace');
    expect(await page.getByLabel('Phone').inputValue()).toBe('0044 not a phone');
    await expectCleanPage(page);
    await context.close();
  });

  test('a phone typed as people say it is kept in E.164, read with the country the organization chose', async () => {
    const { context, page } = await openPage(browser, DESKTOP, { locale: 'en-GB' });
    await page.goto(`${svc.url}/app/sign-up`);
    await page.getByLabel('Email').fill(uniqueEmail('web'));
    await page.getByLabel('Password').fill('password-8');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByLabel('Organization name').fill('London corner shop');
    // The browser's locale (en-GB) chose the country; a person can change it.
    expect(await page.getByLabel('Country').inputValue()).toBe('GB');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await inOrganization(page, 'London corner shop');
    await goTo(page, 'Contacts');
    await page.getByRole('button', { name: 'New contact' }).click();
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Phone').fill('020 7123 4567');
    await page.getByRole('button', { name: 'Add contact' }).click();
    await shows(page.getByRole('heading', { name: 'Ada' }));
    expect(await page.getByLabel('Phone').inputValue()).toBe('+442071234567');
    await expectCleanPage(page);
    await context.close();
  });

  test('an owner changes the organization’s country in the settings, and national numbers follow it', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    await signUpInDashboard(svc, page, 'Moving shop');
    await goTo(page, 'Members');
    const country = page.getByLabel('Organization’s country');
    // The browser's locale (en-US here) chose it at creation.
    await eventually(() => country.inputValue()).toBe('US');
    await country.selectOption('DE');
    await page.getByRole('button', { name: 'Save country' }).click();
    await shows(page.getByRole('status').filter({ hasText: 'Saved.' }));
    await goTo(page, 'Contacts');
    await page.getByRole('button', { name: 'New contact' }).click();
    await page.getByLabel('First name').fill('Jonas');
    await page.getByLabel('Phone').fill('0151 12345678');
    await page.getByRole('button', { name: 'Add contact' }).click();
    await shows(page.getByRole('heading', { name: 'Jonas' }));
    expect(await page.getByLabel('Phone').inputValue()).toBe('+4915112345678');
    await expectCleanPage(page);
    await context.close();
  });
});

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  expectCleanPage,
  goTo,
  inOrganization,
  openPage,
  PHONE,
  shows,
  signInToDashboard,
  signUpInDashboard,
  startDashboard,
} from '../helpers/browser.ts';
import { call, signIn, signUp } from '../helpers/http.ts';
import { lastMailTo } from '../helpers/outbox.ts';
import type { TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

describeBrowser('your account', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`a forgotten password is recovered from the mailed link (${label})`, async () => {
      const person = await signUp(svc, `Forgetful ${label}`);
      const email = person.user.email;
      const { context, page } = await openPage(browser, viewport);
      await page.goto(`${svc.url}/app/sign-in`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByLabel('Email').fill(email);
      await page.getByRole('button', { name: 'Send the link' }).click();
      await shows(page.getByRole('status').filter({ hasText: 'a link to set a new password is on its way' }));
      await expectCleanPage(page);

      const mail = await lastMailTo(svc, email);
      expect(mail.subject).toBe('Reset your password');
      await page.goto(mail.link as string);
      await shows(page.getByRole('heading', { name: 'Choose a new password' }));
      await page.getByLabel('New password').fill('a-new-password-9');
      await page.getByRole('button', { name: 'Change password' }).click();
      await shows(page.getByRole('heading', { name: 'Overview' }));
      await expectCleanPage(page);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await signInToDashboard(svc, page, email, 'a-new-password-9');
      await inOrganization(page, `Forgetful ${label}`);
      await expectCleanPage(page);
      await expect(signIn(svc, email)).rejects.toThrow(/sign-in failed: 400/);
      await context.close();
    });
  }

  test('the account page changes the password and starts another organization', async () => {
    const { context, page } = await openPage(browser, PHONE);
    const email = await signUpInDashboard(svc, page, 'First shop');
    await goTo(page, 'Your account');
    await shows(page.getByRole('heading', { name: 'Your account' }));
    await page.getByLabel('New password').fill('changed-pass-7');
    await page.getByRole('button', { name: 'Change password' }).click();
    await shows(page.getByRole('status').filter({ hasText: 'Your password is changed.' }));
    expect((await signIn(svc, email, 'changed-pass-7')).user.email).toBe(email);

    await page.getByLabel('New organization name').fill('Second shop');
    await page.getByRole('button', { name: 'Create and switch to it' }).click();
    await inOrganization(page, 'Second shop');
    await shows(page.getByRole('heading', { name: 'Overview' }));
    await expectCleanPage(page);
    await context.close();
  });

  test('an invitation waiting for the person is listed on their account page', async () => {
    const inviter = await signUp(svc, 'Inviting shop');
    const { context, page } = await openPage(browser, DESKTOP);
    const email = await signUpInDashboard(svc, page, 'Own shop');
    const invited = await call(svc, 'POST', '/functions/v1/organization-members', {
      token: inviter.access_token,
      body: { email, role: 'admin' },
    });
    expect(invited.status).toBe(201);
    await goTo(page, 'Your account');
    await shows(page.getByText(/Inviting shop/));
    await shows(page.getByText('Open the link in the invitation email to accept or decline.'));
    await expectCleanPage(page);
    await context.close();
  });
});

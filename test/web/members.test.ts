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
  type TestPage,
} from '../helpers/browser.ts';
import { signUp } from '../helpers/http.ts';
import { lastMailTo } from '../helpers/outbox.ts';
import type { TestService } from '../helpers/service.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

/** The owner invites `email` from the Members page, as a person would. */
async function inviteFromDashboard(page: TestPage, email: string, role: string) {
  await goTo(page, 'Members');
  await page.getByLabel('Email to invite').fill(email);
  await page.getByLabel('Role', { exact: true }).selectOption(role);
  await page.getByRole('button', { name: 'Send invitation' }).click();
  await shows(page.getByRole('status').filter({ hasText: `Invitation sent to ${email}` }));
  await shows(page.getByRole('cell', { name: email }));
}

/** The invitee opens the mail's link in their own browser, signs in there and accepts. */
async function acceptFromMail(page: TestPage, email: string) {
  const mail = await lastMailTo(svc, email);
  expect(mail.link).toMatch(/\/invitations#invitation_id=.+&token=.+/);
  await page.goto(mail.link as string);
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('password-8');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await shows(page.getByText(/invites you to join as member/));
  await page.getByRole('button', { name: 'Accept' }).click();
  await shows(page.getByRole('combobox', { name: 'Organization' }));
}

describeBrowser('members in the dashboard', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`a member cannot see keys (${label})`, async () => {
      const owner = await openPage(browser, viewport);
      const orgName = `Team ${label}`;
      await signUpInDashboard(svc, owner.page, orgName);
      const invitee = await signUp(svc); // an account of their own, in no organization yet
      await inviteFromDashboard(owner.page, invitee.user.email, 'member');
      await expectCleanPage(owner.page);

      const member = await openPage(browser, viewport);
      await acceptFromMail(member.page, invitee.user.email);
      await inOrganization(member.page, orgName);
      const toggle = member.page.getByRole('button', { name: 'Menu' });
      if (await toggle.isVisible()) await toggle.click();
      const nav = member.page.getByRole('navigation', { name: 'Main' });
      await shows(nav.getByRole('link', { name: 'Members' }));
      expect(await nav.getByRole('link', { name: 'Agents and keys' }).count()).toBe(0);
      if (await toggle.isVisible()) await toggle.click();

      await member.page.goto(`${svc.url}/app/agents`);
      await shows(member.page.getByText('Only owners and admins manage keys.'));
      expect(await member.page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
      await expectCleanPage(member.page);

      // The roster is read-only for a member; the owner sees the newcomer and can remove them.
      await goTo(member.page, 'Members');
      await shows(member.page.getByRole('cell', { name: `${invitee.user.email} (you)` }));
      expect(await member.page.getByRole('button', { name: 'Send invitation' }).count()).toBe(0);
      expect(await member.page.getByRole('button', { name: /^Remove / }).count()).toBe(0);
      await expectCleanPage(member.page);

      // The owner makes them an admin.
      await owner.page.reload();
      await owner.page.getByRole('combobox', { name: `Role of ${invitee.user.email}` }).selectOption('admin');
      // The picker shows the new role while the change is under way: wait for the roster itself.
      const roleNow = async () =>
        (
          await svc.services.db.query<{ role: string }>(
            'select role from organization_members where user_id = $1',
            [invitee.user.id],
          )
        )[0]?.role;
      await eventually(roleNow).toBe('admin');
      expect(
        await owner.page.getByRole('combobox', { name: `Role of ${invitee.user.email}` }).inputValue(),
      ).toBe('admin');
      await owner.page.getByRole('button', { name: `Remove ${invitee.user.email}` }).click();
      await owner.page.getByRole('button', { name: 'Yes, remove' }).click();
      await eventually(() => owner.page.getByRole('cell', { name: invitee.user.email }).count()).toBe(0);
      await expectCleanPage(owner.page);
      await owner.context.close();
      await member.context.close();
    });
  }

  test('an invitation is withdrawn, and removing the last owner is refused in the service’s words', async () => {
    const { context, page } = await openPage(browser, DESKTOP, { expectedStatuses: [409] });
    const me = await signUpInDashboard(svc, page, 'Withdrawals');
    await inviteFromDashboard(page, 'maybe-later@example.test', 'admin');
    await page.getByRole('button', { name: 'Withdraw invitation to maybe-later@example.test' }).click();
    await page.getByRole('button', { name: 'Yes, withdraw' }).click();
    await shows(page.getByText('No invitations waiting'));

    await page.getByRole('button', { name: `Remove ${me}` }).click();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await shows(page.getByRole('alert').filter({ hasText: /owner/i }));
    await shows(page.getByRole('cell', { name: `${me} (you)` }));
    await expectCleanPage(page);
    await context.close();
  });
});

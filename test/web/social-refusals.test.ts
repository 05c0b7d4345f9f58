// The social calendar's refusals, each in the service's own words: a schedule in the past, a
// delete that comes too late (the post was published meanwhile), an upload the service cannot
// read back, and a free organization. Nothing typed is lost, and nothing is left behind.

import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  eventually,
  expectCleanPage,
  goTo,
  launchBrowser,
  PHONE,
  requireBuiltDashboard,
  shows,
  signInToDashboard,
  signUpInDashboard,
} from '../helpers/browser.ts';
import { call, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { type SocialWorld, socialWorld } from '../helpers/social.ts';
import { loadedWidth, localSlot, openPageInZone, realPng } from './social-helpers.ts';

let w: SocialWorld;
let browser: Browser;

beforeAll(async () => {
  requireBuiltDashboard();
  // The per-minute limit (a matter of test/platform) is raised: one owner runs every flow here.
  w = await socialWorld({ MEDIA_FETCH_ALLOW_HOSTS: '127.0.0.1', RATE_LIMIT_STANDARD_PER_MINUTE: '5000' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await w?.stop();
});

describeBrowser('the social calendar refuses', () => {
  test('a draft is edited and scheduled; a delete refused once it is publishing says why', async () => {
    const draft = await call(w.svc, 'POST', '/functions/v1/social-posts', {
      token: w.owner.access_token,
      body: { platform: 'facebook', account_id: w.facebook, message: 'First try' },
    });
    expect(draft.status).toBe(201);
    const { context, page } = await openPageInZone(browser, PHONE, { expectedStatuses: [409] });
    await signInToDashboard(w.svc, page, w.owner.user.email);
    await page.goto(`${w.svc.url}/app/social/${draft.json.id}`);
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Text').fill('Second try, soon');
    const slot = localSlot(2, 9, 0);
    await page.getByLabel('Publish at').fill(slot.input);
    await page.getByRole('button', { name: 'Schedule' }).click();
    await shows(page.getByRole('heading', { name: 'Post', exact: true }));
    await shows(page.getByText('Second try, soon'));
    await shows(page.getByRole('button', { name: 'Cancel schedule' }));
    await expectCleanPage(page);

    // The publisher claims it (as its run does, on the service path) while the page still offers
    // a delete: the service refuses it.
    await w.svc.services.db.query(
      `update public.social_posts set status = 'publishing' where organization_id = $1 and id = $2`,
      [w.org, draft.json.id],
    );
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Delete post' }).click();
    await shows(page.getByRole('alert').filter({ hasText: /publishing/i }));
    await shows(page.getByText(/can no longer be changed/));
    expect(await page.getByRole('button', { name: 'Delete', exact: true }).count()).toBe(0);
    await expectCleanPage(page);
    await context.close();
  });

  test('a schedule in the past is refused in the service’s words and the form keeps its values', async () => {
    const { context, page } = await openPageInZone(browser, DESKTOP, { expectedStatuses: [400] });
    await signInToDashboard(w.svc, page, w.owner.user.email);
    await page.goto(`${w.svc.url}/app/social/new`);
    const past = localSlot(-1, 10, 0);
    await page.getByLabel('Text').fill('Yesterday’s news');
    await page.getByLabel('Publish at').fill(past.input);
    await page.getByRole('button', { name: 'Schedule' }).click();
    await shows(page.getByRole('alert').filter({ hasText: /future/ }));
    expect(await page.getByLabel('Text').inputValue()).toBe('Yesterday’s news');
    expect(await page.getByLabel('Publish at').inputValue()).toBe(past.input);
    await expectCleanPage(page);
    await context.close();
  });

  test('on a service as `npm start` runs it, an uploaded file is attached without any allow list', async () => {
    // No MEDIA_FETCH_ALLOW_HOSTS: the service's own loopback address is no download source, so
    // the upload must be read from the bucket itself (src/domain/own-object.ts).
    const local = await socialWorld({ RATE_LIMIT_STANDARD_PER_MINUTE: '5000' });
    try {
      const { context, page } = await openPageInZone(browser, DESKTOP);
      await signInToDashboard(local.svc, page, local.owner.user.email);
      await page.goto(`${local.svc.url}/app/social/new`);
      await page.getByLabel('Text').fill('Cake of the day');
      await page.getByLabel('Images or videos').setInputFiles({
        name: 'cake.png',
        mimeType: 'image/png',
        buffer: realPng(16, 16),
      });
      await page.getByRole('button', { name: 'Save draft' }).click();
      await eventually(() => loadedWidth(page, /^Media 1/)).toBe(16);
      const [media] = await local.svc.services.db.query<{ storage_path: string }>(
        'select storage_path from public.social_post_media where organization_id = $1',
        [local.org],
      );
      expect(media?.storage_path).toMatch(new RegExp(`^${local.org}/posts/`));
      // The staged upload is gone; the post keeps its own copy.
      const uploads = path.join(
        local.svc.dataDir,
        'storage',
        'objects',
        'social-media',
        local.org,
        'uploads',
      );
      await eventually(async () => (existsSync(uploads) ? readdirSync(uploads).length : 0)).toBe(0);
      await expectCleanPage(page);
      await context.close();
    } finally {
      await local.stop();
    }
  });

  test('a free organization is told the calendar needs the starter plan', async () => {
    const { context, page } = await openPageInZone(browser, PHONE, { expectedStatuses: [403] });
    await signUpInDashboard(w.svc, page, 'Free bakery');
    await goTo(page, 'Social calendar');
    await shows(page.getByText('The social calendar comes with the paid plans, from Starter up.'));
    // Said to the owner, who can act: no "A person can upgrade the plan".
    expect(await page.getByText(/A person can/).count()).toBe(0);
    await shows(page.getByRole('link', { name: 'See the plans' }));
    expect(await page.getByRole('heading', { name: 'Drafts' }).count()).toBe(0);
    await expectCleanPage(page);
    await context.close();
  });

  test('without a connected account the calendar is still shown, with one clear way to connect', async () => {
    const { context, page } = await openPageInZone(browser, DESKTOP, { expectedStatuses: [409] });
    const owner = await signUp(w.svc, 'Unconnected bakery');
    await setPlan(w.svc, owner, 'starter');
    await signInToDashboard(w.svc, page, owner.user.email);
    await goTo(page, 'Social calendar');
    await shows(page.getByText('Connect a Facebook Page or an Instagram account to schedule posts'));
    // The calendar itself, not an error in its place; no API path for a person to read.
    await shows(page.getByText('Nothing is scheduled or published in this month.'));
    expect(await page.getByText(/functions\/v1|connected-accounts/).count()).toBe(0);
    expect(await page.getByRole('alert').count()).toBe(0);
    // One way to connect: the link, and no "New post" that could only fail.
    expect(await page.getByRole('link', { name: 'New post' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Connect an account' }).click();
    await shows(page.getByRole('heading', { name: 'Connected accounts' }));
    await expectCleanPage(page);
    await context.close();
  });
});

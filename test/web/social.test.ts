import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { TZDate } from '@date-fns/tz';
import { addDays, format } from 'date-fns';
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
import { call } from '../helpers/http.ts';
import { agentToken, mcpClient, tool } from '../helpers/mcp.ts';
import { PAGE, postState, type SocialWorld, schedule, settled, socialWorld } from '../helpers/social.ts';
import { BROWSER_ZONE, loadedWidth, mediaHost, openPageInZone, realPng } from './social-helpers.ts';

let w: SocialWorld;
let browser: Browser;
let media: Awaited<ReturnType<typeof mediaHost>>;

beforeAll(async () => {
  requireBuiltDashboard();
  media = await mediaHost();
  // 127.0.0.1 (any port): the local media host, and the service itself, whose signed URLs carry
  // the files a person uploads to the post that needs them (web/src/pages/social/uploads.ts).
  // One owner runs every flow here within a minute or two, faster than a person could: the
  // per-minute limit (a matter of test/platform) is raised so it does not decide these tests.
  w = await socialWorld({ MEDIA_FETCH_ALLOW_HOSTS: '127.0.0.1', RATE_LIMIT_STANDARD_PER_MINUTE: '5000' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await w?.stop();
  await media?.close();
});

/** A day `days` ahead at hh:mm on the browser's wall clock, as the person types and sees it. */
function localSlot(days: number, hh: number, mm: number) {
  const now = TZDate.tz(BROWSER_ZONE);
  const day = addDays(new TZDate(now.getFullYear(), now.getMonth(), now.getDate(), BROWSER_ZONE), days);
  const at = new TZDate(day.getFullYear(), day.getMonth(), day.getDate(), hh, mm, BROWSER_ZONE);
  return {
    input: format(at, "yyyy-MM-dd'T'HH:mm"),
    day: format(at, 'yyyy-MM-dd'),
    heading: format(at, 'EEEE d MMMM'),
    long: format(at, "EEEE d MMMM yyyy 'at' HH:mm"),
    utc: new Date(at.getTime()),
  };
}

const uploadsLeft = () => {
  const dir = path.join(w.svc.dataDir, 'storage', 'objects', 'social-media', w.org, 'uploads');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describeBrowser('the social calendar', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`a post is scheduled and shows in the calendar (${label})`, async () => {
      const { context, page } = await openPageInZone(browser, viewport);
      await signInToDashboard(w.svc, page, w.owner.user.email);
      await goTo(page, 'Social calendar');
      await shows(page.getByRole('heading', { name: 'Drafts' }));
      await page.getByRole('link', { name: 'New post' }).click();

      // 23:30 in New York is the next day in UTC: a calendar in the wrong zone shows it a day late.
      const slot = localSlot(label === 'desktop' ? 2 : 3, 23, 30);
      const text = `Autumn cakes are back (${label})`;
      await page.getByLabel('Account').selectOption({ label: `${PAGE} (Facebook)` });
      await page.getByLabel('Text').fill(text);
      await page.getByLabel('Images or videos').setInputFiles({
        name: 'cake.png',
        mimeType: 'image/png',
        buffer: realPng(64, 48),
      });
      await page.getByLabel('Publish at').fill(slot.input);
      await page.getByRole('button', { name: 'Schedule' }).click();

      await shows(page.getByText('Scheduled', { exact: true }));
      const id = new URL(page.url()).pathname.split('/').pop() as string;
      expect((await postState(w, id)).scheduled_at?.toISOString()).toBe(slot.utc.toISOString());
      await shows(page.getByText(slot.long));
      await eventually(() => loadedWidth(page, /^Media 1/)).toBe(64);
      // The staged upload went into the post's own file: nothing is left in uploads/.
      expect(uploadsLeft()).toEqual([]);
      await expectCleanPage(page);

      for (const view of ['month', 'week']) {
        await page.goto(`${w.svc.url}/app/social?view=${view}&day=${slot.day}`);
        const day = page
          .getByRole('listitem')
          .filter({ has: page.getByRole('heading', { name: slot.heading }) });
        await shows(
          day.getByRole('link', { name: new RegExp(`23:30 Facebook · Scheduled ${text.slice(0, 20)}`) }),
        );
        await expectCleanPage(page);
      }

      // Cancel: back to a draft, off the calendar and into the drafts beside it.
      await page
        .getByRole('link', { name: new RegExp(text.slice(0, 20)) })
        .first()
        .click();
      await page.getByRole('button', { name: 'Cancel schedule' }).click();
      await shows(page.getByRole('heading', { name: 'Draft post' }));
      expect(await page.getByRole('button', { name: 'Cancel schedule' }).count()).toBe(0);
      await page.getByRole('link', { name: 'Back to the calendar' }).click();
      await shows(page.getByRole('complementary').getByRole('link', { name: text }));

      // Delete: gone from the drafts and from the service.
      await page.getByRole('complementary').getByRole('link', { name: text }).click();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('button', { name: 'Delete post' }).click();
      await shows(page.getByRole('heading', { name: 'Drafts' }));
      await eventually(() => page.getByRole('link', { name: text }).count()).toBe(0);
      expect(await postState(w, id)).toBeUndefined();
      await expectCleanPage(page);
      await context.close();
    });

    test(`a post created over MCP shows with its media (${label})`, async () => {
      const agent = await agentToken(w.svc, w.owner, ['read', 'write']);
      const client = await mcpClient(w.svc, agent.token);
      const slot = localSlot(4, 8, 15);
      const text = `Agent's weekend special (${label})`;
      const created = await tool(client, 'svc_create_social_post', {
        platform: 'instagram',
        message: text,
        media_urls: [media.url],
        scheduled_at: slot.utc.toISOString(),
      });
      expect(created.isError).toBe(false);
      await client.close();

      const { context, page } = await openPageInZone(browser, viewport);
      await signInToDashboard(w.svc, page, w.owner.user.email);
      await page.goto(`${w.svc.url}/app/social?view=week&day=${slot.day}`);
      const day = page
        .getByRole('listitem')
        .filter({ has: page.getByRole('heading', { name: slot.heading }) });
      const chip = day.getByRole('link', { name: /08:15 Instagram · Scheduled Agent's weekend/ });
      await shows(chip);
      await expectCleanPage(page);
      await chip.first().click();
      await shows(page.getByText('An agent (MCP)'));
      await eventually(() => loadedWidth(page, /^Media 1 from http/)).toBe(80);
      await expectCleanPage(page);
      await context.close();
    });
  }

  test('published and failed posts show Meta’s link, figures and error, and offer no changes', async () => {
    const published = await schedule(w, 'facebook', { message: 'Fresh bread today', inSeconds: 1 });
    // Instagram takes no post without media: Meta's side of the publisher refuses it at once.
    const failed = await schedule(w, 'instagram', { message: 'Words only', inSeconds: 1 });
    const out = await settled(w, published.id);
    const refused = await settled(w, failed.id);
    expect([out.status, refused.status]).toEqual(['published', 'failed']);
    const figures = async () =>
      (
        await w.svc.services.db.query('select 1 from public.social_post_metrics where post_id = $1', [
          published.id,
        ])
      ).length;
    await eventually(figures).toBeGreaterThan(0);

    const { context, page } = await openPageInZone(browser, DESKTOP);
    await signInToDashboard(w.svc, page, w.owner.user.email);
    await page.goto(`${w.svc.url}/app/social?view=week`);
    await shows(page.getByRole('link', { name: /Instagram · Failed Words only/ }));
    await page.getByRole('link', { name: /Facebook · Published Fresh bread today/ }).click();
    const permalink = page.getByRole('link', { name: 'See the post on Facebook' });
    await shows(permalink);
    expect(await permalink.getAttribute('href')).toBe(out.permalink);
    await shows(page.getByText('Views'));
    await shows(page.getByText(/can no longer be changed/));
    expect(await page.getByRole('button', { name: /Edit|Delete|Cancel/ }).count()).toBe(0);
    await expectCleanPage(page);

    await page.getByRole('link', { name: 'Back to the calendar' }).click();
    await page.getByRole('link', { name: /Instagram · Failed Words only/ }).click();
    await shows(page.getByRole('heading', { name: 'Publishing failed' }));
    await shows(page.getByText(String(refused.error?.message)));
    expect(await page.getByRole('button', { name: /Edit|Delete|Cancel/ }).count()).toBe(0);
    await expectCleanPage(page);
    await context.close();
  });

  test('a draft is edited and scheduled; a delete refused once it is published says why', async () => {
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
    // Soon enough to be published while the page is open.
    const soon = new Date(Date.now() + 75_000);
    const slot = format(new TZDate(soon.getTime(), BROWSER_ZONE), "yyyy-MM-dd'T'HH:mm");
    await page.getByLabel('Publish at').fill(slot);
    await page.getByRole('button', { name: 'Schedule' }).click();
    await shows(page.getByRole('heading', { name: 'Post' }));
    await shows(page.getByText('Second try, soon'));
    await shows(page.getByRole('button', { name: 'Cancel schedule' }));
    await expectCleanPage(page);

    // The publisher moves on while the page still offers a delete: the service refuses it.
    expect((await settled(w, draft.json.id, 120_000)).status).toBe('published');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Delete post' }).click();
    await shows(page.getByRole('alert').filter({ hasText: /published/i }));
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

  test('a service that cannot read back an upload says so, keeps the form and leaves no file', async () => {
    // As `npm start` on plain http: no MEDIA_FETCH_ALLOW_HOSTS, so the service will not fetch
    // from its own loopback address.
    const local = await socialWorld({ RATE_LIMIT_STANDARD_PER_MINUTE: '5000' });
    try {
      const { context, page } = await openPageInZone(browser, DESKTOP, { expectedStatuses: [400] });
      await signInToDashboard(local.svc, page, local.owner.user.email);
      await page.goto(`${local.svc.url}/app/social/new`);
      await page.getByLabel('Text').fill('Cake of the day');
      await page.getByLabel('Images or videos').setInputFiles({
        name: 'cake.png',
        mimeType: 'image/png',
        buffer: realPng(16, 16),
      });
      await page.getByRole('button', { name: 'Save draft' }).click();
      await shows(page.getByRole('alert').filter({ hasText: /MEDIA_FETCH_ALLOW_HOSTS/ }));
      expect(await page.getByLabel('Text').inputValue()).toBe('Cake of the day');
      expect(
        await page.getByLabel('Images or videos').evaluate((i: HTMLInputElement) => i.files?.length),
      ).toBe(1);
      const rows = await local.svc.services.db.query(
        'select 1 from public.social_posts where organization_id = $1',
        [local.org],
      );
      expect(rows).toEqual([]);
      const folder = path.join(local.svc.dataDir, 'storage', 'objects', 'social-media', local.org);
      const files = async () =>
        existsSync(folder) ? readdirSync(folder, { recursive: true }).map(String) : [];
      await eventually(files).toEqual([]);
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
    await shows(page.getByRole('alert').filter({ hasText: /starter plan/ }));
    expect(await page.getByRole('heading', { name: 'Drafts' }).count()).toBe(0);
    await expectCleanPage(page);
    await context.close();
  });
});

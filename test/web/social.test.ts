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
} from '../helpers/browser.ts';
import { call } from '../helpers/http.ts';
import { agentToken, mcpClient, tool } from '../helpers/mcp.ts';
import { PAGE, postState, type SocialWorld, schedule, settled, socialWorld } from '../helpers/social.ts';
import {
  BROWSER_ZONE,
  loadedWidth,
  localSlot,
  mediaHost,
  openPageInZone,
  realPng,
} from './social-helpers.ts';

let w: SocialWorld;
let browser: Browser;
let media: Awaited<ReturnType<typeof mediaHost>>;

beforeAll(async () => {
  requireBuiltDashboard();
  media = await mediaHost();
  // 127.0.0.1 (any port): the local media host, which serves the media of the MCP-made post.
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
      await page.getByLabel('Account').selectOption({ label: `Page ${PAGE} (Facebook)` });
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
      await shows(page.getByText('You', { exact: true }));
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

  test('a post scheduled elsewhere (a teammate, an agent) shows on the open calendar without a reload', async () => {
    const { context, page } = await openPageInZone(browser, DESKTOP);
    await signInToDashboard(w.svc, page, w.owner.user.email);
    const at = new Date(Date.now() + 3600_000);
    // The week of that hour in the browser's zone (BROWSER_ZONE), whatever day the run falls on.
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: BROWSER_ZONE }).format(at);
    await page.goto(`${w.svc.url}/app/social?view=week&day=${day}`);
    await shows(page.getByRole('heading', { level: 1 }));
    const made = await call(w.svc, 'POST', '/functions/v1/social-posts', {
      token: w.owner.access_token,
      body: {
        platform: 'facebook',
        account_id: w.facebook,
        message: 'Pushed, not polled',
        scheduled_at: at.toISOString(),
      },
    });
    expect(made.status).toBe(201);
    await shows(page.getByRole('link', { name: /Facebook · .*Pushed, not polled/ }));
    await expectCleanPage(page);
    await context.close();
  });
});

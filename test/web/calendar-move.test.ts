// The social calendar as Postiz users know it (issue 30 §3): each post shows its first picture
// (signed in one batch for the view, not one request per post), and in the week view a scheduled
// post moves to another day by dragging, or to another day and time from the keyboard; a move is
// the same write as editing the post, so it lasts (reload) and the service's refusals are shown.

import { TZDate } from '@date-fns/tz';
import { addDays, format, startOfWeek } from 'date-fns';
import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  describeBrowser,
  eventually,
  expectCleanPage,
  requireBuiltDashboard,
  shows,
  signInToDashboard,
  type TestPage,
} from '../helpers/browser.ts';
import { launchBrowser } from '../helpers/chromium.ts';
import { call } from '../helpers/http.ts';
import { postState, type SocialWorld, schedule, settled, socialWorld } from '../helpers/social.ts';
import { BROWSER_ZONE, mediaHost, openPageInZone } from './social-helpers.ts';

let w: SocialWorld;
let browser: Browser;
let media: Awaited<ReturnType<typeof mediaHost>>;

beforeAll(async () => {
  requireBuiltDashboard();
  media = await mediaHost();
  w = await socialWorld({ MEDIA_FETCH_ALLOW_HOSTS: '127.0.0.1', RATE_LIMIT_STANDARD_PER_MINUTE: '5000' });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await w?.stop();
  await media?.close();
});

/**
 * A slot of a week wholly ahead (the week of the day 9 days from now, so its Monday is at least 3
 * days away): `offset` days after its Monday at hh:mm on the browser's wall clock.
 */
function slot(weekAhead: number, offset: number, hh: number, mm: number) {
  const now = TZDate.tz(BROWSER_ZONE);
  const ahead = addDays(new TZDate(now.getFullYear(), now.getMonth(), now.getDate(), BROWSER_ZONE), 9);
  const monday = addDays(startOfWeek(ahead, { weekStartsOn: 1 }), 7 * weekAhead);
  const d = addDays(monday, offset);
  const at = new TZDate(d.getFullYear(), d.getMonth(), d.getDate(), hh, mm, BROWSER_ZONE);
  return {
    day: format(at, 'yyyy-MM-dd'),
    heading: format(at, 'EEEE d MMMM'),
    input: format(at, "yyyy-MM-dd'T'HH:mm"),
    utc: new Date(at.getTime()),
  };
}

async function post(message: string, at: Date, withPicture = false) {
  const made = await call(w.svc, 'POST', '/functions/v1/social-posts', {
    token: w.owner.access_token,
    body: {
      platform: 'facebook',
      account_id: w.facebook,
      message,
      scheduled_at: at.toISOString(),
      ...(withPicture ? { media_urls: [media.url] } : {}),
    },
  });
  expect(made.status).toBe(201);
  return (made.json as { id: string }).id;
}

const dayOf = (page: TestPage, heading: string) =>
  page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: heading }) });

/** API requests from now on, as method and path with query. */
function apiCalls(page: TestPage) {
  const seen: string[] = [];
  const record = (r: Request) => {
    const url = new URL(r.url());
    if (/^\/(rest|functions|auth|storage)\/v1\//.test(url.pathname))
      seen.push(`${r.method()} ${url.pathname}${url.search}`);
  };
  page.on('request', record);
  return seen;
}

const scheduledAt = async (id: string) => (await postState(w, id)).scheduled_at?.toISOString();

describeBrowser('the social calendar: thumbnails and moving posts', () => {
  test('each post shows its first picture, signed in one batch for the week', async () => {
    const tue = slot(1, 1, 10, 0);
    const wed = slot(1, 2, 11, 30);
    await post('Pumpkin loaves', tue.utc, true);
    await post('Cinnamon knots', wed.utc, true);
    await post('Words only, no picture', wed.utc);
    const { context, page } = await openPageInZone(browser);
    await signInToDashboard(w.svc, page, w.owner.user.email);
    const calls = apiCalls(page);
    await page.goto(`${w.svc.url}/app/social?view=week&day=${tue.day}`);
    for (const [day, text] of [
      [tue, 'Pumpkin loaves'],
      [wed, 'Cinnamon knots'],
    ] as const) {
      const thumb = dayOf(page, day.heading)
        .getByRole('link', { name: new RegExp(text) })
        .locator('img');
      await eventually(() =>
        thumb.evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0)),
      ).toBe(80);
    }
    expect(
      await dayOf(page, wed.heading)
        .getByRole('link', { name: /Words only/ })
        .locator('img')
        .count(),
    ).toBe(0);
    await new Promise((r) => setTimeout(r, 1500));
    // Signing is the POST; the GETs after it are the pictures themselves.
    const signing = calls.filter((c) => c.startsWith('POST /storage/v1/object/sign'));
    expect(signing).toEqual(['POST /storage/v1/object/sign/social-media']);
    // Each picture is loaded once (live changes marking the calendar stale do not sign them again).
    const pictures = calls.filter((c) => c.startsWith('GET /storage/v1/object/sign'));
    expect(pictures).toHaveLength(2);
    expect(new Set(pictures).size).toBe(2);
    await expectCleanPage(page);
    await context.close();
  });

  test('a scheduled post dragged to another day keeps its time there, after a reload too', async () => {
    const tue = slot(2, 1, 10, 0);
    const thu = slot(2, 3, 10, 0);
    const id = await post('Drag me to Thursday', tue.utc, true);
    const { context, page } = await openPageInZone(browser);
    await signInToDashboard(w.svc, page, w.owner.user.email);
    await page.goto(`${w.svc.url}/app/social?view=week&day=${tue.day}`);
    const chip = dayOf(page, tue.heading).getByRole('link', { name: /10:00 Facebook · Scheduled Drag me/ });
    await shows(chip);
    await chip.dragTo(dayOf(page, thu.heading));
    await shows(dayOf(page, thu.heading).getByRole('link', { name: /10:00 Facebook · Scheduled Drag me/ }));
    await eventually(() => scheduledAt(id)).toBe(thu.utc.toISOString());
    await shows(page.getByRole('status').filter({ hasText: /^Moved to Thursday/ }));
    await expectCleanPage(page);

    await page.reload();
    await shows(dayOf(page, thu.heading).getByRole('link', { name: /Drag me/ }));
    expect(
      await dayOf(page, tue.heading)
        .getByRole('link', { name: /Drag me/ })
        .count(),
    ).toBe(0);
    await context.close();
  });

  test('from the keyboard: Move, a day and a time; a past time is refused in words, and so is one too far', async () => {
    const wed = slot(3, 2, 9, 0);
    const fri = slot(3, 4, 15, 45);
    const id = await post('Move me by keys', wed.utc);
    const { context, page } = await openPageInZone(browser, undefined, { expectedStatuses: [400, 422] });
    await signInToDashboard(w.svc, page, w.owner.user.email);
    await page.goto(`${w.svc.url}/app/social?view=week&day=${wed.day}`);
    const move = page.getByRole('button', { name: 'Move Move me by keys' });
    await shows(move);
    await move.focus();
    await page.keyboard.press('Enter');
    const field = page.getByLabel('New day and time');
    await shows(field);
    expect(await field.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await field.inputValue()).toBe(wed.input);

    const past = format(addDays(TZDate.tz(BROWSER_ZONE), -1), "yyyy-MM-dd'T'HH:mm");
    await field.fill(past);
    await page.keyboard.press('Enter');
    await shows(page.getByRole('alert').filter({ hasText: 'That time has already passed' }));
    expect(await scheduledAt(id)).toBe(wed.utc.toISOString());

    // The service's own rule: at most a year ahead, said for people with the field's name.
    const far = format(addDays(TZDate.tz(BROWSER_ZONE), 400), "yyyy-MM-dd'T'HH:mm");
    await field.fill(far);
    await page.keyboard.press('Enter');
    await shows(page.getByRole('alert').filter({ hasText: /365 days/ }));
    expect(await scheduledAt(id)).toBe(wed.utc.toISOString());
    await expectCleanPage(page);

    await field.fill(fri.input);
    await page.keyboard.press('Enter');
    await shows(dayOf(page, fri.heading).getByRole('link', { name: /15:45 Facebook · Scheduled Move me/ }));
    await eventually(() => scheduledAt(id)).toBe(fri.utc.toISOString());
    // The post shows on its new day while the move is on its way; the form closes when it is saved.
    await shows(page.getByRole('status').filter({ hasText: /^Moved to Friday/ }));
    expect(await field.count()).toBe(0);
    // Focus follows the post to its new day, on its Move button.
    await eventually(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Move Move me by keys',
    );
    await expectCleanPage(page);

    await page.reload();
    await shows(dayOf(page, fri.heading).getByRole('link', { name: /15:45 Facebook · Scheduled Move me/ }));
    await context.close();
  });

  test('a published post stays where it is: no Move, not draggable', async () => {
    const done = await schedule(w, 'facebook', { message: 'Already out', inSeconds: 1 });
    expect((await settled(w, done.id)).status).toBe('published');
    const { context, page } = await openPageInZone(browser);
    await signInToDashboard(w.svc, page, w.owner.user.email);
    await page.goto(`${w.svc.url}/app/social?view=week`);
    const chip = page.getByRole('link', { name: /Published Already out/ });
    await shows(chip);
    expect(await chip.getAttribute('draggable')).toBeNull();
    expect(await page.getByRole('button', { name: /Move Already out/ }).count()).toBe(0);
    await context.close();
  });
});

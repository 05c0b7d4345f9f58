import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TZDate } from '@date-fns/tz';
import { addDays, format } from 'date-fns';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { encodePng } from '../fakes/media/png.ts';
import { DESKTOP, openPage, type TestPage } from '../helpers/browser.ts';

// For test/web/social.test.ts. Candidates for test/helpers/browser.ts: a page whose browser lives
// in a given time zone (openPage has no timezoneId), and a local host serving media files.

/** Where the calendar's browser lives: not UTC, so a wrong zone would move posts. */
export const BROWSER_ZONE = 'America/New_York';

/**
 * openPage, with the browser in `timezoneId` (Playwright's emulation: Intl, Date and the
 * datetime-local input all follow it).
 */
export async function openPageInZone(
  browser: Browser,
  viewport = DESKTOP,
  { timezoneId = BROWSER_ZONE, expectedStatuses = [] as number[] } = {},
): Promise<{ context: BrowserContext; page: TestPage }> {
  return openPage(browser, viewport, { expectedStatuses, timezoneId });
}

/** A grey PNG a browser can decode. */
export const realPng = (width: number, height: number) => encodePng(width, height, () => [0xc0, 0xc0, 0xc0]);

/** A local media host (allowed by MEDIA_FETCH_ALLOW_HOSTS) serving one PNG at /photo.png. */
export async function mediaHost(): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const photo = realPng(80, 60);
  const server = createServer((req, res) => {
    if (req.url !== '/photo.png') return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'image/png' }).end(photo);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/photo.png`;
  return { server, url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The natural width of an <img> once it has loaded (0 while loading or broken). */
export const loadedWidth = (page: Page, alt: RegExp) =>
  page
    .getByRole('img', { name: alt })
    .first()
    .evaluate((img: HTMLImageElement) => (img.complete ? img.naturalWidth : 0));

/** A day `days` ahead at hh:mm on the browser's wall clock, as the person types and sees it. */
export function localSlot(days: number, hh: number, mm: number) {
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

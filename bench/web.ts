// The dashboard's budget: initial JavaScript (gzipped bytes the browser downloads before the first
// page works; the budget is 250 KB) and time to interactive on the embedded default (the budget
// is one second), for the sign-in page and a signed-in list page, in Debian's Chromium with a
// cold cache (a new browser profile each load) and then warm (hashed assets from the cache).
// Beside each: the same files from a bare node:http server (bench/web-baseline.ts). Service and
// baseline run in processes of their own; rounds alternate; figures are medians. A benchmark,
// not a test: it prints figures and never fails on them.
//
//   npm run build:web && npm run bench:web
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../test/helpers/chromium.ts';
import { median, startChild } from './child.ts';

const ROUNDS = 9;

type Session = { access_token: string; refresh_token: string; expires_at: number };
type Load = { interactiveMs: number; scriptBytes: number };

/** What supabase-js keeps in localStorage for a signed-in person (its storage key for this host). */
const storedSession = (url: string, session: Session) => ({
  key: `sb-${new URL(url).hostname.split('.')[0]}-auth-token`,
  value: JSON.stringify(session),
});

/**
 * Loads `path` and waits for `ready` (a selector that exists once the page can be used); the time
 * is the page's own clock from navigation start. With `warm`, a second load in the same profile.
 */
async function load(
  browser: Browser,
  url: string,
  path: string,
  ready: string,
  session?: Session,
  warm = false,
) {
  const context = await browser.newContext();
  if (session) {
    const { key, value } = storedSession(url, session);
    await context.addInitScript(([k, v]) => localStorage.setItem(k as string, v as string), [key, value]);
  }
  const page = await context.newPage();
  if (warm) await page.goto(`${url}${path}`).then(() => page.waitForSelector(ready));
  await page.goto(`${url}${path}`);
  await page.waitForSelector(ready);
  const result: Load = await page.evaluate(() => ({
    interactiveMs: performance.now(),
    scriptBytes: performance
      .getEntriesByType('resource')
      .filter((e) => (e as PerformanceResourceTiming).initiatorType === 'script' || e.name.endsWith('.js'))
      .reduce((sum, e) => sum + (e as PerformanceResourceTiming).encodedBodySize, 0),
  }));
  await context.close();
  return result;
}

const service = await startChild<{ url: string; anonKey: string; session: Session }>('web-service.ts', {});
const baseline = await startChild<{ url: string }>('web-baseline.ts', {
  BENCH_ANON_KEY: service.info.anonKey,
});
const browser = await launchBrowser();
const cases = [
  { name: 'sign-in page, cold', path: '/app/sign-in', ready: 'button[type=submit]:not([disabled])' },
  {
    name: 'sign-in page, warm',
    path: '/app/sign-in',
    ready: 'button[type=submit]:not([disabled])',
    warm: true,
  },
  // The baseline has no API: the signed-in page is measured on the service only.
  {
    name: 'contacts (signed in), cold',
    path: '/app/contacts',
    ready: 'text=No contacts match',
    signedIn: true,
  },
  {
    name: 'contacts (signed in), warm',
    path: '/app/contacts',
    ready: 'text=No contacts match',
    signedIn: true,
    warm: true,
  },
];
try {
  console.log(`dashboard on the embedded default, ${ROUNDS} rounds each, medians`);
  for (const c of cases) {
    const svc: Load[] = [];
    const base: Load[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const session = c.signedIn ? service.info.session : undefined;
      svc.push(await load(browser, service.info.url, c.path, c.ready, session, c.warm));
      if (!c.signedIn) base.push(await load(browser, baseline.info.url, c.path, c.ready, undefined, c.warm));
    }
    const ms = median(svc.map((l) => l.interactiveMs));
    const kb = median(svc.map((l) => l.scriptBytes)) / 1024;
    const vs = base.length ? ` (bare server: ${median(base.map((l) => l.interactiveMs)).toFixed(0)} ms)` : '';
    console.log(
      `${c.name.padEnd(28)} interactive ${ms.toFixed(0).padStart(5)} ms${vs}; JavaScript ${kb.toFixed(1)} KB gzipped`,
    );
  }
} finally {
  await browser.close();
  await baseline.stop();
  await service.stop();
}

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { CHROMIUM, launchBrowser as launchChromium } from './chromium.ts';
import { startTestService, type TestService, uniqueEmail } from './service.ts';

export { launchBrowser } from './chromium.ts';

/**
 * Browser tests run where Chromium is installed. CI installs it and sets REQUIRE_BROWSER=1, so
 * there a missing browser fails the run instead of skipping it.
 */
export const describeBrowser = existsSync(CHROMIUM) || process.env.REQUIRE_BROWSER ? describe : describe.skip;

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

export type TestPage = Page & {
  /** Console errors and uncaught exceptions so far (a flow must end with none). */
  problems: string[];
};

/**
 * A fresh browser profile (its own storage, so its own session) at `viewport`. Responses the
 * test expects to fail (4xx the page shows as a message) are listed in `expectedStatuses`
 * (`timezoneId`: the browser's zone, the machine's by default):
 * Chromium logs every failed fetch as a console error.
 */
export async function openPage(
  browser: Browser,
  viewport = DESKTOP,
  {
    expectedStatuses = [] as number[],
    timezoneId = undefined as string | undefined,
    locale = undefined as string | undefined,
  } = {},
): Promise<{ context: BrowserContext; page: TestPage }> {
  const context = await browser.newContext({ viewport, timezoneId, locale });
  const page = (await context.newPage()) as TestPage;
  page.problems = [];
  const failed = new Set<string>();
  page.on('response', (res) => {
    if (res.status() >= 400 && expectedStatuses.includes(res.status())) failed.add(res.url());
  });
  page.on('console', (msg) => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    const url = msg.location().url;
    if (/Failed to load resource/.test(text) && url && failed.has(url)) return;
    page.problems.push(text);
  });
  page.on('pageerror', (err) => page.problems.push(`uncaught: ${err.message}`));
  return { context, page };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

/** axe-core's serious and critical violations on the page as it is now (evaluated past the CSP). */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is a global the source above defined
    const axe = (window as any).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations as AxeViolation[];
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** What every flow ends with: no console errors, nothing serious for axe on the page it ends on. */
export async function expectCleanPage(page: TestPage) {
  expect(await seriousViolations(page)).toEqual([]);
  expect(page.problems).toEqual([]);
}

/** The dashboard must be built (npm install's prepare does it) before the browser can load it. */
export function requireBuiltDashboard() {
  if (!existsSync(new URL('../../web/dist/index.html', import.meta.url))) {
    throw new Error('The dashboard is not built: run `npm run build:web`');
  }
}

/**
 * Waits until the locator's element is visible (what a person would wait for). Playwright's own
 * assertions come with @playwright/test, which is not used: vitest runs these tests.
 */
export const shows = (locator: Locator) => locator.first().waitFor({ state: 'visible', timeout: 15_000 });

/** Polls a value from the page until the assertion chained on it holds (or 15 s pass). */
export const eventually = <T>(read: () => Promise<T>) =>
  expect.poll(read, { timeout: 15_000, interval: 100 });

/** A new person signs up in the dashboard and starts an organization named `orgName`. */
export async function signUpInDashboard(
  svc: TestService,
  page: TestPage,
  orgName: string,
  email = uniqueEmail('web'),
) {
  await page.goto(`${svc.url}/app/sign-up`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('password-8');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByLabel('Organization name').fill(orgName);
  await page.getByRole('button', { name: 'Create organization' }).click();
  await inOrganization(page, orgName);
  return email;
}

/** Signs an existing person in through the form; they land in their current organization. */
export async function signInToDashboard(
  svc: TestService,
  page: TestPage,
  email: string,
  password = 'password-8',
) {
  await page.goto(`${svc.url}/app/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await shows(page.getByRole('combobox', { name: 'Organization' }));
}

/** Waits until the organization switcher shows `orgName` as the current organization. */
export const inOrganization = (page: TestPage, orgName: string) =>
  eventually(() =>
    page.getByRole('combobox', { name: 'Organization' }).locator('option:checked').textContent(),
  ).toBe(orgName);

/** Opens an area from the main navigation, through the menu button at phone width. */
export async function goTo(page: TestPage, area: string) {
  const toggle = page.getByRole('button', { name: 'Menu' });
  if (await toggle.isVisible()) await toggle.click();
  const link = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: area, exact: true });
  const to = await link.getAttribute('href');
  await link.click();
  // The click only starts the navigation: wait until the router has rendered its page (it marks
  // the link as current; at phone width the closed menu hides it), or a test that goes away and
  // back may look at the page it left.
  await page
    .locator(`nav[aria-label="Main"] a[href="${to}"][aria-current="page"]`)
    .waitFor({ state: 'attached' });
}

/**
 * What a browser test file starts with: the built dashboard's service (with `env`) and a Chromium;
 * `stop` closes both.
 */
export async function startDashboard(env: Record<string, string> = {}) {
  requireBuiltDashboard();
  const svc = await startTestService(env);
  const browser = await launchChromium();
  return {
    svc,
    browser,
    async stop() {
      await browser.close();
      await svc.stop();
    },
  };
}

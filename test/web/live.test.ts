// The dashboard is pushed changes by /realtime/v1 instead of polling (docs/realtime.md): with the
// inbox open and nothing happening, no request goes out on a timer; a customer's new message (a
// signed webhook the worker processes) then appears in the list, in the navigation's unread count
// and in the open thread without a reload.

import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import {
  DESKTOP,
  describeBrowser,
  expectCleanPage,
  goTo,
  launchBrowser,
  openPage,
  requireBuiltDashboard,
  shows,
  signInToDashboard,
  type TestPage,
} from '../helpers/browser.ts';
import { signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { connect } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { APP_SECRET, deliver, fixture, VERIFY_TOKEN } from '../webhooks/meta.ts';

let svc: TestService;
let graph: FakeGraph;
let browser: Browser;
let seq = 0;
const TOKEN = 'EAAG-live-token-for-tests';

beforeAll(async () => {
  requireBuiltDashboard();
  graph = await startFakeGraph({ accounts: {} });
  svc = await startTestService({
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    META_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
    WORKER_POLL_MS: '500',
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await graph?.close();
});

async function customerWrites(phoneId: string, from: string, text: string) {
  const body = fixture('wa-text', {
    PHONE_NUMBER_ID: phoneId,
    WA_ID: from,
    TEXT_ID: `LIVE${++seq}`,
    '1750090702': String(Math.floor(Date.now() / 1000)),
    'Does it come in another color?': text,
  });
  expect((await deliver(svc, body)).status).toBe(200);
}

/** The API calls the page makes from now on (the dashboard's own files are not counted). */
function apiCalls(page: TestPage) {
  const seen: string[] = [];
  const record = (r: Request) => {
    const url = new URL(r.url());
    if (/^\/(rest|functions|auth|storage)\/v1\//.test(url.pathname))
      seen.push(`${r.method()} ${url.pathname}${url.search}`);
  };
  page.on('request', record);
  return { seen, stop: () => page.off('request', record) };
}

/** Longer than twice the 3-second poll the inbox had: a timer would have fired twice. */
const quietWhile = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeBrowser('the dashboard, live', () => {
  test('a live page asks for what it shows once: the social calendar and the inbox', async () => {
    const owner = await signUp(svc, 'Asked once');
    await setPlan(svc, owner, 'starter');
    const pageId = `9${process.pid}${String(++seq).padStart(3, '0')}`;
    graph.setAccount(pageId, { token: TOKEN, channel: 'messenger' });
    await connect(svc, owner, 'facebook', pageId, TOKEN);
    const { context, page } = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, page, owner.user.email);
    // Subscribing to its channel marks a page's queries stale: that must not send them again.
    for (const [area, shown] of [
      ['Social calendar', page.getByRole('heading', { name: 'Drafts' })],
      ['Inbox', page.getByText('No conversations match')],
    ] as const) {
      const calls = apiCalls(page);
      await goTo(page, area);
      await shows(shown);
      await quietWhile(4_000);
      calls.stop();
      expect(calls.seen.length, area).toBeGreaterThan(0);
      expect(
        calls.seen.filter((c, i) => calls.seen.indexOf(c) !== i),
        area,
      ).toEqual([]);
    }
    // Opened by a full page load the socket joins after the first reads have come back: still once.
    const calls = apiCalls(page);
    await page.reload();
    await shows(page.getByText('No conversations match'));
    await quietWhile(4_000);
    calls.stop();
    expect(calls.seen.length).toBeGreaterThan(0);
    expect(calls.seen.filter((c, i) => calls.seen.indexOf(c) !== i)).toEqual([]);
    await context.close();
  });

  test('with the inbox open nothing is polled, and a new message appears in the list, the navigation and the thread', async () => {
    const owner = await signUp(svc, 'Live inbox');
    await setPlan(svc, owner, 'starter');
    const phoneId = `2${process.pid}${String(++seq).padStart(3, '0')}`;
    graph.setAccount(phoneId, { token: TOKEN, channel: 'whatsapp' });
    await connect(svc, owner, 'whatsapp', phoneId, TOKEN);
    const customer = `1415556${String(1000 + seq).padStart(4, '0')}`;
    const { context, page } = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, page, owner.user.email);
    await goTo(page, 'Inbox');
    await shows(page.getByText('No conversations match'));

    const idle = apiCalls(page);
    await quietWhile(7_000);
    idle.stop();
    expect(idle.seen).toEqual([]);

    await customerWrites(phoneId, customer, 'Is the blue one in stock?');
    await shows(page.getByRole('link', { name: 'Sheena Nelson' }));
    await shows(page.getByText('Is the blue one in stock?'));
    const count = page.getByRole('navigation', { name: 'Main' }).locator('.nav-count');
    await shows(count);
    expect(await count.textContent()).toBe('1 conversation with unread messages');

    await page.getByRole('link', { name: 'Sheena Nelson' }).click();
    await shows(page.getByRole('heading', { name: 'Sheena Nelson' }));
    // Opening it marks it read, a change pushed back to the page (one refetch each): let it settle.
    await count.waitFor({ state: 'detached' });
    await quietWhile(2_000);
    const open = apiCalls(page);
    await quietWhile(7_000);
    open.stop();
    expect(open.seen).toEqual([]);
    await customerWrites(phoneId, customer, 'And in green?');
    await shows(page.getByRole('listitem').filter({ hasText: 'And in green?' }));
    await expectCleanPage(page);
    await context.close();
  });
});

// The inbox as two panes on a desktop (issue 30 §3, Chatwoot-like): the conversation list beside
// the open thread, both updated live; an unread badge on the conversation that is not open and the
// navigation's count agreeing; a deep link opens both panes. At phone width one pane at a time,
// with a way back to the list.

import type { Browser, Locator } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import {
  DESKTOP,
  describeBrowser,
  eventually,
  expectCleanPage,
  goTo,
  launchBrowser,
  openPage,
  PHONE,
  requireBuiltDashboard,
  shows,
  signInToDashboard,
  type TestPage,
} from '../helpers/browser.ts';
import { orgOf, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { connect, inbound } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { APP_SECRET, deliver, fixture, VERIFY_TOKEN } from '../webhooks/meta.ts';

let svc: TestService;
let graph: FakeGraph;
let browser: Browser;
let seq = 0;
const TOKEN = 'EAAG-inbox-panes-token';

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

const waId = () => `1415557${String(1000 + (++seq % 9000)).padStart(4, '0')}`;

/** A shop with WhatsApp, a conversation with Ana (read) and the webhook that lets customers write. */
async function shopWithAna(name: string) {
  const owner = await signUp(svc, name);
  await setPlan(svc, owner, 'starter');
  const phoneId = `3${process.pid}${String(++seq).padStart(3, '0')}`;
  graph.setAccount(phoneId, { token: TOKEN, channel: 'whatsapp' });
  const account = (await connect(svc, owner, 'whatsapp', phoneId, TOKEN)).id;
  const ana = waId();
  const { conversationId } = await inbound(svc, 'whatsapp', orgOf(owner), account, ana, 1);
  await svc.services.db.query('update conversations set unread_count = 0 where id = $1', [conversationId]);
  const writes = async (from: string, text: string) => {
    const body = fixture('wa-text', {
      PHONE_NUMBER_ID: phoneId,
      WA_ID: from,
      TEXT_ID: `PANES${++seq}`,
      '1750090702': String(Math.floor(Date.now() / 1000)),
      'Does it come in another color?': text,
    });
    expect((await deliver(svc, body)).status).toBe(200);
  };
  return { owner, ana, anaConversation: conversationId, writes };
}

const box = async (l: Locator) => {
  const b = await l.boundingBox();
  if (!b) throw new Error('not on screen');
  return b;
};

const listPane = (page: TestPage) => page.getByRole('region', { name: 'Conversations' });
const threadPane = (page: TestPage, name: string) => page.getByRole('region', { name });
const rowOf = (page: TestPage, name: string) =>
  listPane(page)
    .getByRole('listitem')
    .filter({ has: page.getByRole('link', { name, exact: true }) });

describeBrowser('the inbox in two panes', () => {
  test('on a desktop the list sits beside the open thread; both update live, with unread badges', async () => {
    const { owner, ana, anaConversation, writes } = await shopWithAna('Two panes');
    const { context, page } = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, page, owner.user.email);
    // A deep link to a conversation opens the inbox with it open.
    await page.goto(`${svc.url}/app/inbox/${anaConversation}`);
    await shows(page.getByRole('heading', { name: 'Ana', level: 2 }));
    await shows(listPane(page).getByRole('link', { name: 'Ana', exact: true }));
    expect(
      await listPane(page).getByRole('link', { name: 'Ana', exact: true }).getAttribute('aria-current'),
    ).toBe('page');
    const list = await box(listPane(page));
    const thread = await box(threadPane(page, 'Ana'));
    // Side by side: the list to the left of the thread, their tops level.
    expect(list.x + list.width).toBeLessThanOrEqual(thread.x);
    expect(Math.abs(list.y - thread.y)).toBeLessThan(40);
    expect(thread.width).toBeGreaterThan(400);

    // The open conversation's customer writes: the thread and the list's preview both show it.
    await writes(ana, 'Do you deliver on Sundays?');
    await shows(
      threadPane(page, 'Ana').getByRole('listitem').filter({ hasText: 'Do you deliver on Sundays?' }),
    );
    await shows(rowOf(page, 'Ana').getByText('Do you deliver on Sundays?'));

    // Another customer writes: their conversation appears with its badge; the open one stays read.
    await writes(waId(), 'Are you open today?');
    await shows(rowOf(page, 'Sheena Nelson').getByText('1 unread'));
    await shows(rowOf(page, 'Sheena Nelson').getByText('Are you open today?'));
    const count = page.getByRole('navigation', { name: 'Main' }).locator('.nav-count');
    await eventually(() => count.textContent()).toBe('1 conversation with unread messages');
    // The count is a read of its own: Ana's row loses a badge the new message gave it once the
    // page has marked her read and the list has been read again, which may be later.
    await eventually(() =>
      rowOf(page, 'Ana')
        .getByText(/\d+ unread/)
        .count(),
    ).toBe(0);
    await expectCleanPage(page);

    // Opening it from the list keeps the list; its badge and the navigation's count go.
    await listPane(page).getByRole('link', { name: 'Sheena Nelson' }).click();
    await shows(page.getByRole('heading', { name: 'Sheena Nelson', level: 2 }));
    expect(page.url()).toMatch(/\/app\/inbox\/[0-9a-f-]{36}$/);
    await shows(threadPane(page, 'Sheena Nelson').getByText('Are you open today?'));
    await count.waitFor({ state: 'detached' });
    await eventually(() =>
      rowOf(page, 'Sheena Nelson')
        .getByText(/\d+ unread/)
        .count(),
    ).toBe(0);
    expect(await listPane(page).isVisible()).toBe(true);
    await expectCleanPage(page);
    await context.close();
  });

  test('on a phone one pane at a time: the list, then the conversation with a way back', async () => {
    const { owner, anaConversation } = await shopWithAna('One pane');
    const { context, page } = await openPage(browser, PHONE);
    await signInToDashboard(svc, page, owner.user.email);
    await goTo(page, 'Inbox');
    await shows(listPane(page).getByRole('link', { name: 'Ana', exact: true }));
    expect(await page.getByRole('heading', { name: 'Ana' }).count()).toBe(0);
    await expectCleanPage(page);

    await listPane(page).getByRole('link', { name: 'Ana', exact: true }).click();
    await shows(page.getByRole('heading', { name: 'Ana', level: 2 }));
    expect(await listPane(page).count()).toBe(0);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(PHONE.width);
    await expectCleanPage(page);

    await page.getByRole('link', { name: 'All conversations' }).click();
    await shows(listPane(page).getByRole('link', { name: 'Ana', exact: true }));
    expect(await page.getByRole('heading', { name: 'Ana' }).count()).toBe(0);

    // A deep link at phone width is the conversation alone.
    await page.goto(`${svc.url}/app/inbox/${anaConversation}`);
    await shows(page.getByRole('heading', { name: 'Ana', level: 2 }));
    expect(await listPane(page).count()).toBe(0);
    await context.close();
  });
});

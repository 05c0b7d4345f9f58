// The inbox in a real browser: a signed WhatsApp webhook's message appears without a reload and is
// answered from the reply box (the fake Graph API receives it, its delivery status shows as
// ticks); outside the 24-hour window only a template is offered; a refused send keeps its text.

import type { Browser } from 'playwright-core';
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
import { orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { connect, inbound } from '../helpers/send.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { APP_SECRET, deliver, fixture, VERIFY_TOKEN } from '../webhooks/meta.ts';

let svc: TestService;
let graph: FakeGraph;
let browser: Browser;
let seq = 0;
const TOKEN = 'EAAG-inbox-token-for-tests';

beforeAll(async () => {
  requireBuiltDashboard();
  graph = await startFakeGraph({ accounts: {} });
  svc = await startTestService({
    META_GRAPH_URL: graph.url,
    META_INSTAGRAM_GRAPH_URL: graph.url,
    META_GRAPH_TIMEOUT_MS: '2000',
    META_APP_SECRET: APP_SECRET,
    WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
    // The inline worker processes webhook events; polling often keeps the test quick.
    WORKER_POLL_MS: '500',
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
  await graph?.close();
});

/** An organization on `plan` with a connected WhatsApp number the fake Graph API knows. */
async function shopWithWhatsApp(name: string, plan: string | null) {
  const owner = await signUp(svc, name);
  if (plan) await setPlan(svc, owner, plan);
  const phoneId = `1${process.pid}${String(++seq).padStart(3, '0')}`;
  graph.setAccount(phoneId, { token: TOKEN, channel: 'whatsapp' });
  const account = (await connect(svc, owner, 'whatsapp', phoneId, TOKEN)).id;
  return { owner, phoneId, account };
}

const waId = () => `1415555${String(1000 + (++seq % 9000)).padStart(4, '0')}`;
const nowSeconds = () => String(Math.floor(Date.now() / 1000));

/** Meta's text message webhook from `from`, sent now, signed with the app secret. */
async function customerWrites(phoneId: string, from: string, text: string) {
  const body = fixture('wa-text', {
    PHONE_NUMBER_ID: phoneId,
    WA_ID: from,
    TEXT_ID: `INBOX${++seq}`,
    '1750090702': nowSeconds(),
    'Does it come in another color?': text,
  });
  expect((await deliver(svc, body)).status).toBe(200);
}

async function signedIn(page: TestPage, owner: Session) {
  await signInToDashboard(svc, page, owner.user.email);
}

const conversationRow = async (owner: Session) =>
  (
    await svc.services.db.query<{ status: string; unread_count: number }>(
      'select status, unread_count from conversations where organization_id = $1',
      [orgOf(owner)],
    )
  )[0];

describeBrowser('the inbox in the dashboard', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`an inbound WhatsApp message appears in the inbox and is answered (${label})`, async () => {
      const { owner, phoneId } = await shopWithWhatsApp(`Inbox ${label}`, 'starter');
      const customer = waId();
      const { context, page } = await openPage(browser, viewport);
      await signedIn(page, owner);
      await goTo(page, 'Inbox');
      await shows(page.getByText('No conversations match'));

      // The page stays open: the webhook's message must show up without a reload.
      await customerWrites(phoneId, customer, 'Does it come in another color?');
      await shows(page.getByRole('link', { name: 'Sheena Nelson' }));
      await shows(page.getByText('1 unread'));
      await shows(page.getByText('Does it come in another color?'));
      await expectCleanPage(page);

      await page.getByRole('link', { name: 'Sheena Nelson' }).click();
      await shows(page.getByRole('heading', { name: 'Sheena Nelson' }));
      await shows(page.getByRole('listitem').filter({ hasText: 'Does it come in another color?' }));
      await shows(page.getByText(/Free text is possible until/));

      await page.getByLabel('Message', { exact: true }).fill('Yes, in blue and green.');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      const reply = page.getByRole('listitem').filter({ hasText: 'Yes, in blue and green.' });
      await shows(reply.filter({ hasText: /✓\s*Sent/ }));
      // The reply is pushed to the thread as soon as it is stored, before the send's answer reaches
      // the page; the box is cleared when that answer has come.
      await eventually(() => page.getByLabel('Message', { exact: true }).inputValue()).toBe('');
      const sent = graph.sent().filter((r) => r.senderId === phoneId);
      expect(sent.map((r) => r.body)).toEqual([
        expect.objectContaining({
          to: customer,
          type: 'text',
          text: expect.objectContaining({ body: 'Yes, in blue and green.' }),
        }),
      ]);

      // Meta reports the delivery, then the customer answers: both show on the open thread.
      const [row] = await svc.services.db.query<{ provider_message_id: string }>(
        "select provider_message_id from messages where body = 'Yes, in blue and green.' and organization_id = $1",
        [orgOf(owner)],
      );
      const wamid = row?.provider_message_id as string;
      const status = fixture('wa-status', {
        PHONE_NUMBER_ID: phoneId,
        WAMID: wamid,
        STATUS: 'delivered',
        WA_ID: customer,
      });
      expect((await deliver(svc, status)).status).toBe(200);
      await shows(reply.filter({ hasText: /✓✓\s*Delivered/ }));
      const read = fixture('wa-status', {
        PHONE_NUMBER_ID: phoneId,
        WAMID: wamid,
        STATUS: 'read',
        WA_ID: customer,
      });
      expect((await deliver(svc, read)).status).toBe(200);
      await shows(reply.filter({ hasText: /✓✓\s*Read/ }));
      await customerWrites(phoneId, customer, 'Great, I will take the blue one.');
      await shows(page.getByRole('listitem').filter({ hasText: 'Great, I will take the blue one.' }));
      await expectCleanPage(page);

      // Read while open on screen, then resolved: the list shows both.
      await page.getByLabel('Conversation status').selectOption('resolved');
      await eventually(async () => (await conversationRow(owner))?.status).toBe('resolved');
      // The page marks it read once it has read the new count (pushed, then fetched), which may come
      // after the status was saved.
      await eventually(async () => (await conversationRow(owner))?.unread_count).toBe(0);
      await page.getByRole('link', { name: 'All conversations' }).click();
      await shows(page.getByRole('link', { name: 'Sheena Nelson' }));
      await eventually(() => page.getByText(/\d+ unread/).count()).toBe(0);
      await expectCleanPage(page);
      await context.close();
    });
  }

  test('outside the 24-hour window the free text is disabled with the reason and a template goes instead', async () => {
    const { owner, phoneId, account } = await shopWithWhatsApp('Late inbox', 'starter');
    const customer = waId();
    const { conversationId } = await inbound(svc, 'whatsapp', orgOf(owner), account, customer, 30);
    const { context, page } = await openPage(browser, PHONE);
    await signedIn(page, owner);
    await page.goto(`${svc.url}/app/inbox/${conversationId}`);
    await shows(page.getByRole('heading', { name: 'Ana' }));
    await shows(page.getByText(/The 24-hour window closed at .*only an approved template/));
    expect(await page.getByLabel('Message', { exact: true }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Send', exact: true }).isDisabled()).toBe(true);

    await page.getByLabel('Template name').fill('order_update');
    await page.getByLabel('Language').fill('en_US');
    await page.getByLabel('Parameters').fill('Ana\nA-1001');
    await page.getByRole('button', { name: 'Send template' }).click();
    await shows(
      page
        .getByRole('listitem')
        .filter({ hasText: 'Template “order_update” (en_US)' })
        .filter({ hasText: /✓\s*Sent/ }),
    );
    const sent = graph.sent().filter((r) => r.senderId === phoneId);
    expect(sent.map((r) => r.body)).toEqual([
      expect.objectContaining({
        to: customer,
        type: 'template',
        template: expect.objectContaining({
          name: 'order_update',
          language: expect.objectContaining({ code: 'en_US' }),
          components: [
            {
              type: 'body',
              parameters: [
                { type: 'text', text: 'Ana' },
                { type: 'text', text: 'A-1001' },
              ],
            },
          ],
        }),
      }),
    ]);
    await expectCleanPage(page);
    await context.close();
  });

  test('a send the service refuses (free plan) shows its reason and keeps the typed text', async () => {
    const { owner, phoneId, account } = await shopWithWhatsApp('Free inbox', null);
    const { conversationId } = await inbound(svc, 'whatsapp', orgOf(owner), account, waId(), 1);
    const { context, page } = await openPage(browser, DESKTOP, { expectedStatuses: [403] });
    await signedIn(page, owner);
    await page.goto(`${svc.url}/app/inbox/${conversationId}`);
    await shows(page.getByRole('heading', { name: 'Ana' }));
    await page.getByLabel('Message', { exact: true }).fill('Your order is ready');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await shows(page.getByRole('alert').filter({ hasText: /Free plan includes no outbound messages/i }));
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('Your order is ready');
    expect(graph.requests.filter((r) => r.senderId === phoneId && r.path.endsWith('/messages'))).toEqual([]);
    await expectCleanPage(page);
    await context.close();
  });

  test('a long thread shows its latest messages first and the older ones a click away', async () => {
    const { owner, account } = await shopWithWhatsApp('Chatty inbox', 'starter');
    const org = orgOf(owner);
    const { conversationId } = await inbound(svc, 'whatsapp', org, account, waId(), 2);
    // One statement each: the service stamps created_at (the thread's page order) itself.
    for (let n = 1; n <= 60; n++)
      await svc.services.db.query(
        `insert into messages (organization_id, conversation_id, account_id, direction, type, body, status, received_at)
         values ($1, $2, $3, 'in', 'text', $4, 'received', now())`,
        [org, conversationId, account, `note ${n}`],
      );
    const { context, page } = await openPage(browser, DESKTOP);
    await signedIn(page, owner);
    await page.goto(`${svc.url}/app/inbox/${conversationId}`);
    await shows(page.getByRole('listitem').filter({ hasText: 'note 60' }));
    expect(await page.getByText('note 5', { exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Older messages' }).click();
    await shows(page.getByText('note 5', { exact: true }));
    await page.getByRole('button', { name: 'Newer messages' }).click();
    await shows(page.getByText('note 60', { exact: true }));
    await expectCleanPage(page);
    await context.close();
  });

  test('Meta refuses a reply: the thread shows it failed with Meta’s reason and the text stays', async () => {
    const { owner, phoneId } = await shopWithWhatsApp('Refused inbox', 'starter');
    const { context, page } = await openPage(browser, PHONE, { expectedStatuses: [502] });
    await customerWrites(phoneId, waId(), 'Is my parcel on its way?');
    await signedIn(page, owner);
    await goTo(page, 'Inbox');
    await page.getByLabel('Channel').selectOption('messenger');
    await shows(page.getByText('No conversations match'));
    await page.getByLabel('Channel').selectOption('whatsapp');
    await page.getByRole('link', { name: 'Sheena Nelson' }).click();
    await shows(page.getByRole('listitem').filter({ hasText: 'Is my parcel on its way?' }));

    graph.failNext(1, 'recipient');
    await page.getByLabel('Message', { exact: true }).fill('It left this morning.');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await shows(
      page
        .getByRole('alert')
        .filter({ hasText: /The provider refused the message: .*Message undeliverable/ }),
    );
    await shows(
      page
        .getByRole('listitem')
        .filter({ hasText: 'It left this morning.' })
        .filter({ hasText: /Failed: .*Message undeliverable: .*not on WhatsApp/ }),
    );
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('It left this morning.');
    await expectCleanPage(page);
    await context.close();
  });
});

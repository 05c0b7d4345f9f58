import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  openPage,
  PHONE,
  seriousViolations,
  shows,
  signInToDashboard,
  startDashboard,
} from '../helpers/browser.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { connect } from '../helpers/send.ts';
import type { TestService } from '../helpers/service.ts';
import { createOrderOverApi, insertRows } from './orders-helpers.ts';

// Every page of the dashboard, with data on it, at desktop and phone width: axe-core finds no
// serious or critical violation, and the browser logs no error. The flows' own tests check their
// pages as they act; this one makes sure no page is left out.

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;
let owner: Session;
const paths: [page: string, path: string, heading: string, text: string][] = [];

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard({
    INTERNAL_WEBHOOK_TOKEN: 'a11y-token',
    RATE_LIMIT_STANDARD_PER_MINUTE: '5000',
  }));
  owner = await signUp(svc, 'Every page shop');
  await setPlan(svc, owner, 'starter');
  const [contact] = await insertRows(svc, owner, 'contacts', {
    first_name: 'Ana',
    last_name: 'Souza',
    tags: ['vip'],
  });
  const [item] = await insertRows(svc, owner, 'inventory_items', {
    name: 'Sourdough loaf',
    sku: 'BRD-1',
    quantity_on_hand: 4,
  });
  const order = await createOrderOverApi(svc, owner, [
    { name: 'Sourdough loaf', quantity: 1 },
    { name: 'Candles', quantity: 1 },
  ]);
  const wa = await connect(svc, owner, 'whatsapp', `a11y-${process.pid}`, 'token');
  const fb = await connect(svc, owner, 'facebook', `a11y-page-${process.pid}`, 'token');
  const inbound = await call(svc, 'POST', '/functions/v1/internal-webhook', {
    headers: { authorization: 'Bearer a11y-token' },
    body: {
      organization_id: orgOf(owner),
      type: 'message.inbound',
      data: {
        channel: 'whatsapp',
        account_id: wa.id,
        from: '5511987654321',
        name: 'Ana Souza',
        text: 'Hello!',
      },
    },
  });
  expect(inbound.status).toBe(200);
  const post = await call(svc, 'POST', '/functions/v1/social-posts', {
    token: owner.access_token,
    body: {
      platform: 'facebook',
      account_id: fb.id,
      message: 'Fresh bread',
      scheduled_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
  });
  expect(post.status).toBe(201);
  let conversation: string | undefined;
  for (let i = 0; i < 100 && !conversation; i++) {
    [{ id: conversation } = { id: undefined }] = await svc.services.db.query<{ id: string }>(
      'select id from conversations where organization_id = $1',
      [orgOf(owner)],
    );
    if (!conversation) await new Promise((r) => setTimeout(r, 100));
  }
  // [what, path, the page's heading, a text its data shows]
  paths.push(
    ['overview', '/app', 'Overview', 'Fresh bread'],
    ['contacts', '/app/contacts', 'Contacts', 'Ana Souza'],
    ['a contact', `/app/contacts/${contact?.id}`, 'Ana Souza', 'Conversations'],
    ['orders', '/app/orders', 'Orders', order.order_number],
    ['a new order', '/app/orders/new', 'New order', 'Lines'],
    ['an order', `/app/orders/${order.id}`, `Order ${order.order_number}`, 'Sourdough loaf'],
    ['inventory', '/app/inventory', 'Inventory', 'Sourdough loaf'],
    ['an item', `/app/inventory/${item?.id}`, 'Sourdough loaf', 'Reserved'],
    ['the inbox', '/app/inbox', 'Inbox', 'Ana Souza'],
    // The conversation opens inside the inbox (its name an h2 beside or instead of the list).
    ['a conversation', `/app/inbox/${conversation}`, 'Inbox', 'Hello!'],
    ['the calendar', '/app/social', 'Social calendar', 'Fresh bread'],
    ['a new post', '/app/social/new', 'New post', 'Media'],
    ['a post', `/app/social/${post.json.id}`, 'Post', 'Fresh bread'],
    ['agents and keys', '/app/agents', 'Agents and keys', 'Sign-in attempts by agents'],
    ['members', '/app/members', 'Members', 'People'],
    ['connected accounts', '/app/accounts', 'Connected accounts', `a11y-page-${process.pid}`],
    ['webhook deliveries', '/app/webhooks', 'Webhook deliveries', 'message.inbound'],
    ['your account', '/app/account', 'Your account', 'Change your password'],
  );
});
afterAll(() => stop?.());

describeBrowser('every page of the dashboard', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`has no serious accessibility violation and no console error (${label})`, async () => {
      const { context, page } = await openPage(browser, viewport);
      const found: Record<string, string[]> = {};
      for (const path of ['/app/sign-in', '/app/sign-up', '/app/recover']) {
        await page.goto(`${svc.url}${path}`);
        await shows(page.getByRole('heading', { level: 1 }));
        found[path] = await seriousViolations(page);
      }
      await signInToDashboard(svc, page, owner.user.email);
      for (const [name, path, heading, text] of paths) {
        await page.goto(`${svc.url}${path}`);
        await shows(page.getByRole('heading', { level: 1, name: heading, exact: true }));
        await shows(page.getByText(text, { exact: false }));
        found[name] = await seriousViolations(page);
      }
      expect(Object.fromEntries(Object.entries(found).filter(([, v]) => v.length))).toEqual({});
      expect(page.problems).toEqual([]);
      await context.close();
    });
  }
});

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  expectCleanPage,
  goTo,
  openPage,
  PHONE,
  shows,
  signInToDashboard,
  signUpInDashboard,
  startDashboard,
  type TestPage,
} from '../helpers/browser.ts';
import { call, inviteAndAccept, signUp } from '../helpers/http.ts';
import type { TestService } from '../helpers/service.ts';
import { apiSession, createOrderOverApi, insertRows } from './orders-helpers.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

const view = (page: TestPage, name: string) =>
  page.getByRole('navigation', { name: 'Inventory views' }).getByRole('link', { name }).click();

/** The text of the inventory table's row for `name` (cells as a person reads them). */
const rowOf = (page: TestPage, name: string) =>
  page.getByRole('row').filter({ has: page.getByRole('link', { name, exact: true }) });

describeBrowser('inventory in the dashboard', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`stock levels, and a draft an order created is reviewed, edited and archived (${label})`, async () => {
      const { context, page } = await openPage(browser, viewport);
      const email = await signUpInDashboard(svc, page, `Stock shop ${label}`);
      const api = await apiSession(svc, email);
      await insertRows(svc, api, 'inventory_items', {
        name: 'Blue mug',
        sku: 'MUG-1',
        unit_price: 12.5,
        quantity_on_hand: 3,
        reorder_point: 5,
      });
      // An order for more mugs than there are, confirmed: reserved 5 of 3 on hand. Its second
      // line names nothing in the catalog, so the service adds a draft item for review.
      const order = await createOrderOverApi(svc, api, [
        { name: 'Blue mug', quantity: 5 },
        { name: 'Gift wrap', quantity: 1, unit_price: 2 },
      ]);
      const confirmed = await call(svc, 'PATCH', `/rest/v1/orders?id=eq.${order.id}`, {
        token: api.access_token,
        body: { status: 'confirmed' },
      });
      expect(confirmed.status).toBe(204);

      await goTo(page, 'Inventory');
      const mug = rowOf(page, 'Blue mug');
      await shows(mug);
      const cells = await mug.getByRole('cell').allInnerTexts();
      const figures = cells.map((c) => c.replace(/^[^:]*:\s*/, '').trim());
      // Item, SKU, status, on hand, reserved, available, backordered, price
      expect(figures.slice(1, 7)).toEqual(['MUG-1', 'Active Low stock', '3', '5', '-2', '2']);
      expect(await rowOf(page, 'Gift wrap').count()).toBe(0);

      await view(page, 'Drafts to review');
      await shows(rowOf(page, 'Gift wrap').getByText('Needs review'));
      await rowOf(page, 'Gift wrap').getByRole('link', { name: 'Gift wrap' }).click();
      await shows(page.getByRole('heading', { name: 'Gift wrap' }));
      await shows(page.getByText('created by an order for review'));
      await page.getByLabel('SKU', { exact: true }).fill('WRAP-1');
      await page.getByLabel('Unit price').fill('2.5');
      await page.getByLabel('Reorder point').fill('10');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await shows(page.getByRole('status').filter({ hasText: 'Saved.' }));
      expect(await page.getByLabel('SKU', { exact: true }).inputValue()).toBe('WRAP-1');
      await expectCleanPage(page);

      await page.getByRole('button', { name: 'Archive item' }).click();
      await shows(page.getByRole('button', { name: 'Restore item' }));
      await goTo(page, 'Inventory');
      await view(page, 'Drafts to review');
      await shows(page.getByText('No drafts wait for review'));
      await view(page, 'Archived');
      await shows(rowOf(page, 'Gift wrap').getByText('WRAP-1'));
      await page.getByRole('searchbox', { name: 'Search name or SKU' }).fill('mug');
      await shows(page.getByText('No archived items match'));
      await view(page, 'Active');
      await shows(rowOf(page, 'Blue mug'));
      await expectCleanPage(page);
      await context.close();
    });
  }

  test('a member reviews drafts too: approving and archiving are theirs to do', async () => {
    const owner = await signUp(svc, 'Member stock shop');
    const member = await signUp(svc);
    await inviteAndAccept(svc, owner, member, 'member');
    await createOrderOverApi(svc, owner, [{ name: 'Sample pack', quantity: 1, unit_price: 4 }]);
    const { context, page } = await openPage(browser, PHONE);
    await signInToDashboard(svc, page, member.user.email);
    await goTo(page, 'Inventory');
    await view(page, 'Drafts to review');
    await rowOf(page, 'Sample pack').getByRole('link', { name: 'Sample pack' }).click();
    await page.getByRole('button', { name: 'Approve item' }).click();
    await shows(page.getByRole('button', { name: 'Archive item' }));
    await goTo(page, 'Inventory');
    await shows(rowOf(page, 'Sample pack').getByText('Active'));
    await expectCleanPage(page);
    await context.close();
  });

  test('at the plan’s item ceiling a new item shows the service’s message and keeps what was typed', async () => {
    const { context, page } = await openPage(browser, DESKTOP, { expectedStatuses: [403] });
    const email = await signUpInDashboard(svc, page, 'Full stock shop');
    const api = await apiSession(svc, email);
    await insertRows(
      svc,
      api,
      'inventory_items',
      Array.from({ length: 30 }, (_, n) => ({ name: `Item ${n + 1}` })),
    );
    await goTo(page, 'Inventory');
    await page.getByRole('button', { name: 'New item' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Item 31');
    await page.getByLabel('SKU', { exact: true }).fill('ONE-MORE');
    await page.getByRole('button', { name: 'Add item' }).click();
    await shows(page.getByRole('alert').filter({ hasText: /Free plan allows 30 inventory items/ }));
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Item 31');
    expect(await page.getByLabel('SKU', { exact: true }).inputValue()).toBe('ONE-MORE');
    await expectCleanPage(page);
    await context.close();
  });

  test('a refused edit (a SKU another item has) shows why and keeps the edit (phone)', async () => {
    const { context, page } = await openPage(browser, PHONE, { expectedStatuses: [409] });
    const email = await signUpInDashboard(svc, page, 'Sku shop');
    const api = await apiSession(svc, email);
    const [, lamp] = await insertRows(svc, api, 'inventory_items', [
      { name: 'Desk', sku: 'DESK-1' },
      { name: 'Lamp', sku: 'LAMP-1' },
    ]);
    await page.goto(`${svc.url}/app/inventory/${lamp?.id}`);
    await shows(page.getByRole('heading', { name: 'Lamp' }));
    await page.getByLabel('SKU', { exact: true }).fill('DESK-1');
    await page.getByLabel('Name', { exact: true }).fill('Reading lamp');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await shows(page.getByRole('alert').filter({ hasText: 'Another item already has this SKU' }));
    expect(await page.getByLabel('SKU', { exact: true }).inputValue()).toBe('DESK-1');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Reading lamp');
    await expectCleanPage(page);
    await context.close();
  });
});

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  describeBrowser,
  eventually,
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
import { apiSession, createOrderOverApi, insertRows, movesShown } from './orders-helpers.ts';

let svc: TestService;
let browser: Browser;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ svc, browser, stop } = await startDashboard());
});
afterAll(() => stop?.());

/** Fills the create-order form's shipping part. */
async function fillShipping(page: TestPage) {
  await page.getByLabel('Shipping address').fill('12 Analytical Row\nLondon');
  await page.getByLabel('Shipping phone').fill('+442071234567');
}

/** Clicks a move and waits until the page shows the order in its new status. */
async function move(page: TestPage, button: string, status: string) {
  await page.getByRole('region', { name: 'Next steps' }).getByRole('button', { name: button }).click();
  await shows(page.getByRole('status').filter({ hasText: `Moved to ${status}` }));
  await shows(page.getByRole('listitem').filter({ hasText: new RegExp(`→ ${status}`, 'i') }));
}

describeBrowser('orders in the dashboard', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    test(`a new person signs up, adds a contact, orders an item matched to inventory and ships it (${label})`, async () => {
      const { context, page } = await openPage(browser, viewport);
      const email = await signUpInDashboard(svc, page, `Order shop ${label}`);
      const api = await apiSession(svc, email);
      const [mug] = await insertRows(svc, api, 'inventory_items', {
        name: 'Blue mug',
        sku: 'MUG-1',
        unit_price: 12.5,
        quantity_on_hand: 10,
      });

      await goTo(page, 'Contacts');
      await page.getByRole('button', { name: 'New contact' }).click();
      await page.getByLabel('First name').fill('Ada');
      await page.getByLabel('Last name').fill('Lovelace');
      await page.getByLabel('Email').fill('ada@example.test');
      await page.getByRole('button', { name: 'Add contact' }).click();
      await shows(page.getByRole('heading', { name: 'Ada Lovelace' }));

      await goTo(page, 'Orders');
      await shows(page.getByText('No orders match'));
      await page.getByRole('link', { name: 'New order' }).click();
      await page.getByLabel('Find a contact').fill('lovel');
      const contact = page.getByLabel('Contact', { exact: true });
      await eventually(() => contact.locator('option', { hasText: 'Ada Lovelace' }).count()).toBe(1);
      await contact.selectOption({ label: 'Ada Lovelace <ada@example.test>' });
      await fillShipping(page);
      await page.getByLabel('Line 1 name').fill('blue MUG');
      await page.getByLabel('Line 1 quantity').fill('2');
      await page.getByRole('button', { name: 'Add a line' }).click();
      await page.getByLabel('Line 2 name').fill('Gift wrap');
      await page.getByLabel('Line 2 unit price').fill('3');
      await page.getByRole('button', { name: 'Create order' }).click();

      await shows(page.getByRole('heading', { name: 'Order ORD-000001' }));
      await shows(page.getByText('Order ORD-000001 created'));
      const lines = page.getByRole('table', { name: 'Order lines' });
      const mugRow = lines.getByRole('row').filter({ hasText: 'blue MUG' });
      await shows(mugRow.getByRole('link', { name: 'Blue mug (MUG-1)' }));
      // How the service matched a line is its own business: no "Matched by name" for a person.
      expect(await mugRow.textContent()).not.toMatch(/Matched by/);
      // Where the order came from, in a person's words (not "source function").
      await shows(page.getByText(/entered in the dashboard/));
      expect(await page.getByText(/source function/).count()).toBe(0);
      await shows(lines.getByRole('row').filter({ hasText: 'Gift wrap' }).getByText('New draft item'));
      await shows(page.getByRole('link', { name: 'Ada Lovelace' }));
      await shows(page.getByText('$28.00').first());
      expect(await movesShown(page)).toEqual(['Confirm', 'Cancel order']);
      await expectCleanPage(page);

      await move(page, 'Confirm', 'confirmed');
      expect(await movesShown(page)).toEqual(['Start processing', 'Cancel order']);
      await move(page, 'Start processing', 'processing');
      expect(await movesShown(page)).toEqual(['Mark shipped', 'Cancel order']);
      await move(page, 'Mark shipped', 'shipped');
      expect(await movesShown(page)).toEqual(['Mark delivered', 'Mark returned']);
      // Every move is in the history, made by this person.
      const history = page.getByRole('list').filter({ hasText: 'Created as' });
      await eventually(() => history.getByRole('listitem').filter({ hasText: email }).count()).toBe(4);

      // Shipping took the two mugs off hand.
      const stock = await call(
        svc,
        'GET',
        `/rest/v1/inventory_items?id=eq.${mug?.id}&select=quantity_on_hand,quantity_reserved`,
        {
          token: api.access_token,
        },
      );
      expect(stock.json).toEqual([{ quantity_on_hand: 8, quantity_reserved: 0 }]);

      await goTo(page, 'Orders');
      await page.getByLabel('Status').selectOption('shipped');
      await shows(page.getByRole('link', { name: 'ORD-000001' }));
      await page.getByLabel('Status').selectOption('pending');
      await shows(page.getByText('No orders match'));
      await page.getByLabel('Status').selectOption('');
      await page.getByRole('searchbox', { name: 'Order number' }).fill('000002');
      await shows(page.getByText('No orders match'));
      await page.getByRole('searchbox', { name: 'Order number' }).fill('1');
      await shows(page.getByRole('link', { name: 'ORD-000001' }));
      await expectCleanPage(page);
      await context.close();
    });
  }

  test('a move the service refuses shows its reason, and the buttons follow the order’s real status', async () => {
    const { context, page } = await openPage(browser, DESKTOP, { expectedStatuses: [409] });
    const email = await signUpInDashboard(svc, page, 'Stale page shop');
    const api = await apiSession(svc, email);
    const order = await createOrderOverApi(svc, api, [{ name: 'Candle', quantity: 1, unit_price: 9 }]);
    // A page that hears no changes (its realtime socket answered by nobody, as when a connection
    // is lost) is stale: the service still has the last word.
    await page.routeWebSocket(/\/realtime\/v1\//, () => {});
    await page.goto(`${svc.url}/app/orders/${order.id}`);
    expect(await eventually(() => movesShown(page)).toEqual(['Confirm', 'Cancel order']));

    // Someone else cancels the order while this page still offers to confirm it.
    const cancelled = await call(svc, 'PATCH', `/rest/v1/orders?id=eq.${order.id}`, {
      token: api.access_token,
      body: { status: 'cancelled' },
    });
    expect(cancelled.status).toBe(204);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await shows(
      page.getByRole('alert').filter({ hasText: 'An order cannot move from cancelled to confirmed' }),
    );
    await shows(page.getByText('moves no further'));
    expect(await movesShown(page)).toEqual([]);
    await expectCleanPage(page);
    await context.close();
  });

  test('a move made elsewhere shows on the open order without a reload, with its history line', async () => {
    const { context, page } = await openPage(browser, DESKTOP);
    const email = await signUpInDashboard(svc, page, 'Live order shop');
    const api = await apiSession(svc, email);
    const order = await createOrderOverApi(svc, api, [{ name: 'Lamp', quantity: 1, unit_price: 20 }]);
    await page.goto(`${svc.url}/app/orders/${order.id}`);
    expect(await eventually(() => movesShown(page)).toEqual(['Confirm', 'Cancel order']));
    const cancelled = await call(svc, 'PATCH', `/rest/v1/orders?id=eq.${order.id}`, {
      token: api.access_token,
      body: { status: 'cancelled' },
    });
    expect(cancelled.status).toBe(204);
    await shows(page.getByText('moves no further'));
    expect(await movesShown(page)).toEqual([]);
    const history = page.getByRole('region', { name: 'Status history' }).getByRole('listitem');
    await shows(history.filter({ hasText: /→\s*Cancelled/ }));
    await expectCleanPage(page);
    await context.close();
  });

  test('at the plan’s order ceiling the form shows the service’s message and keeps what was typed (phone)', async () => {
    const { context, page } = await openPage(browser, PHONE, { expectedStatuses: [403] });
    const email = await signUpInDashboard(svc, page, 'Busy shop');
    const api = await apiSession(svc, email);
    await insertRows(
      svc,
      api,
      'orders',
      Array.from({ length: 25 }, () => ({ shipping_address: 'Somewhere' })),
    );
    await goTo(page, 'Orders');
    await page.getByRole('link', { name: 'New order' }).click();
    await page.getByLabel('Customer name').fill('Grace Hopper');
    await fillShipping(page);
    await page.getByLabel('Line 1 name').fill('Compiler');
    await page.getByRole('button', { name: 'Create order' }).click();
    await shows(page.getByRole('alert').filter({ hasText: /Free plan allows 25 orders/ }));
    expect(await page.getByLabel('Customer name').inputValue()).toBe('Grace Hopper');
    expect(await page.getByLabel('Line 1 name').inputValue()).toBe('Compiler');
    expect(await page.getByLabel('Shipping phone').inputValue()).toBe('+442071234567');
    await expectCleanPage(page);
    await context.close();
  });

  test('a refused order names the fields to fix in the form’s words and keeps what was typed', async () => {
    const { context, page } = await openPage(browser, DESKTOP, { expectedStatuses: [400] });
    await signUpInDashboard(svc, page, 'Hasty shop');
    await goTo(page, 'Orders');
    await page.getByRole('link', { name: 'New order' }).click();
    await page.getByLabel('Shipping phone').fill('+442071234567');
    await page.getByLabel('Line 1 SKU').fill('SKU-9');
    await page.getByLabel('Line 1 quantity').fill('0');
    await page.getByRole('button', { name: 'Create order' }).click();
    await shows(page.getByRole('alert').filter({ hasText: '3 values need correcting' }));
    await shows(page.getByText(/^Shipping address: /));
    await shows(page.getByText(/^Line 1 name: /));
    await shows(page.getByText(/^Line 1 quantity: /));
    // In people's words, not zod's defaults ("Too small: expected string to have >=1 characters").
    expect(await page.getByRole('alert').textContent()).not.toMatch(/Too small|expected|>=/);
    expect(await page.getByLabel('Line 1 SKU').inputValue()).toBe('SKU-9');
    expect(await page.getByLabel('Shipping phone').inputValue()).toBe('+442071234567');
    await expectCleanPage(page);
    await context.close();
  });

  test('a member moves orders but is not offered to delete one; an owner is', async () => {
    const owner = await signUp(svc, 'Team shop');
    const member = await signUp(svc);
    await inviteAndAccept(svc, owner, member, 'member');
    const order = await createOrderOverApi(svc, owner, [{ name: 'Lamp', quantity: 1, unit_price: 30 }]);

    const { context, page } = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, page, member.user.email);
    await page.goto(`${svc.url}/app/orders/${order.id}`);
    expect(await eventually(() => movesShown(page)).toEqual(['Confirm', 'Cancel order']));
    expect(await page.getByRole('button', { name: 'Delete order' }).count()).toBe(0);
    await move(page, 'Confirm', 'confirmed');
    await expectCleanPage(page);
    await context.close();

    const asOwner = await openPage(browser, DESKTOP);
    await signInToDashboard(svc, asOwner.page, owner.user.email);
    await asOwner.page.goto(`${svc.url}/app/orders/${order.id}`);
    await asOwner.page.getByRole('button', { name: 'Delete order' }).click();
    await asOwner.page.getByRole('button', { name: 'Delete ORD-000001 for good' }).click();
    await shows(asOwner.page.getByRole('heading', { name: 'Orders' }));
    await shows(asOwner.page.getByText('No orders match'));
    await expectCleanPage(asOwner.page);
    await asOwner.context.close();
  });

  test('a pickup order asks for no address or phone and says it is picked up', async () => {
    const { context, page } = await openPage(browser, PHONE);
    await signUpInDashboard(svc, page, 'Pickup counter');
    await goTo(page, 'Orders');
    await page.getByRole('link', { name: 'New order' }).click();
    await page.getByLabel('Customer name').fill('Walk-in');
    await page.getByLabel('Delivered or picked up').selectOption('pickup');
    expect(await page.getByLabel('Shipping address').count()).toBe(0);
    expect(await page.getByLabel('Shipping phone').count()).toBe(0);
    await page.getByLabel('Line 1 name').fill('Croissant');
    await page.getByLabel('Line 1 quantity').fill('3');
    await page.getByRole('button', { name: 'Create order' }).click();
    await shows(page.getByRole('heading', { name: 'Order ORD-000001' }));
    await shows(page.getByText('Picked up by the customer'));
    await expectCleanPage(page);
    await context.close();
  });
});

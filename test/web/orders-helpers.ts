// Shared by test/web/orders.test.ts and inventory.test.ts: seeding over the public API as the
// person signed in to the dashboard, and reading what the order page offers.

import { expect } from 'vitest';
import type { TestPage } from '../helpers/browser.ts';
import { call, type Session, signIn } from '../helpers/http.ts';
import type { TestService } from '../helpers/service.ts';

/** The same person's API session (their current organization: the one made in the dashboard). */
export const apiSession = (svc: TestService, email: string) => signIn(svc, email);

/** Inserts rows over /rest/v1 as `s` and returns them. */
export async function insertRows(
  svc: TestService,
  s: Session,
  table: string,
  rows: Record<string, unknown> | Record<string, unknown>[],
) {
  const r = await call(svc, 'POST', `/rest/v1/${table}`, {
    token: s.access_token,
    body: rows,
    headers: { prefer: 'return=representation' },
  });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json as { id: string; [k: string]: unknown }[];
}

/** An order made through the service's create-order function, as the dashboard's form makes it. */
export async function createOrderOverApi(svc: TestService, s: Session, items: Record<string, unknown>[]) {
  const r = await call(svc, 'POST', '/functions/v1/orders', {
    token: s.access_token,
    body: { address: '1 Main St, Springfield', phone_number: '+14155550100', items },
  });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json.order as { id: string; order_number: string; items: { item_id: string }[] };
}

/** The names of the buttons under "Next steps" on an order's page, in order. */
export const movesShown = (page: TestPage) =>
  page.getByRole('region', { name: 'Next steps' }).getByRole('button').allTextContents();

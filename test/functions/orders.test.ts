// POST /functions/v1/orders: svc_create_order for people over HTTP (the dashboard's create form):
// lines linked to inventory as spec 2.3 says, the plan's ceiling, and only in one's organization.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Order function shop');
});
afterAll(() => svc?.stop());

const item = async (s: Session, body: Record<string, unknown>) => {
  const r = await call(svc, 'POST', '/rest/v1/inventory_items', {
    token: s.access_token,
    body,
    headers: { prefer: 'return=representation' },
  });
  expect(r.status).toBe(201);
  return r.json[0] as { id: string };
};

const order = (s: Session, items: Record<string, unknown>[], extra: Record<string, unknown> = {}) =>
  call(svc, 'POST', '/functions/v1/orders', {
    token: s.access_token,
    body: { address: '1 Main St, Springfield', phone_number: '+14155550100', items, ...extra },
  });

describe('POST /functions/v1/orders', () => {
  it('links each line by name, then SKU, else to a new draft item, and numbers the order', async () => {
    const mug = await item(owner, { name: 'Blue mug', sku: 'MUG-1', unit_price: 12.5, quantity_on_hand: 10 });
    const tee = await item(owner, { name: 'Tee', sku: 'TEE-1', unit_price: 20 });
    const r = await order(owner, [
      { name: 'blue MUG', quantity: 2 },
      { name: 'Shirt', sku: 'tee-1', quantity: 1 },
      { name: 'Poster', quantity: 3, unit_price: 5 },
    ]);
    expect(r.status).toBe(201);
    expect(r.json.order_number).toMatch(/^ORD-\d{6}$/);
    const [a, b, c] = r.json.order.items;
    expect([a.item_id, a.auto_created, a.unit_price]).toEqual([mug.id, false, 12.5]);
    expect([b.item_id, b.auto_created]).toEqual([tee.id, false]);
    expect(c.auto_created).toBe(true);
    expect(c.item_id).toEqual(expect.any(String));
    expect(r.json.order.subtotal).toBe(60);
    expect(r.json.order.status).toBe('pending');

    const draft = await call(
      svc,
      'GET',
      `/rest/v1/inventory_items?id=eq.${c.item_id}&select=status,auto_created`,
      {
        token: owner.access_token,
      },
    );
    expect(draft.json).toEqual([{ status: 'draft', auto_created: true }]);
  });

  it('refuses what svc_create_order refuses, in the same words', async () => {
    const r = await order(owner, []);
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('validation_error');
    const missing = await order(owner, [{ name: 'Mug', quantity: 1 }], {
      contact_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(missing.status).toBe(404);
  });

  it('stops at the plan’s monthly ceiling with its message', async () => {
    const full = await signUp(svc, 'Full order shop');
    const seeded = await call(svc, 'POST', '/rest/v1/orders', {
      token: full.access_token,
      body: Array.from({ length: 25 }, () => ({ shipping_address: 'x' })),
    });
    expect(seeded.status).toBe(201);
    const r = await order(full, [{ name: 'Mug', quantity: 1 }]);
    expect(r.status).toBe(403);
    expect(r.json.error).toBe('plan_limit_exceeded');
    expect(r.json.message).toMatch(/25 orders/);
  });

  it('needs a signed-in person in an organization', async () => {
    const anon = await call(svc, 'POST', '/functions/v1/orders', {
      body: { address: 'x', phone_number: '+14155550100', items: [{ name: 'a', quantity: 1 }] },
    });
    expect(anon.status).toBe(401);
  });
});

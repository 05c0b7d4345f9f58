import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// Embedding as supabase-js users write it: `!inner` to filter parents by their children, `!left`,
// a foreign key named beside the join (`contacts!contact_id!inner`), spreads (`...contacts(…)`),
// an embedded resource filtered by `is.null`, aggregates grouped by the plain columns, and the
// counts PostgREST offers. Another tenant's rows never show through any of them.

let svc: TestService;
let owner: Session;
let stranger: Session;

const rest = (token: string) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${token}` },
  });

async function seedOrders(session: Session) {
  const db = rest(session.access_token);
  const { data: contacts, error } = await db
    .from('contacts')
    .insert([
      { first_name: 'Ann', last_name: 'Vip' },
      { first_name: 'Bob', last_name: 'Plain' },
    ])
    .select('id, first_name');
  if (error || !contacts) throw new Error(`seed contacts: ${error?.message}`);
  const [ann, bob] = contacts as { id: string }[];
  const { data: orders, error: e2 } = await db
    .from('orders')
    .insert([
      { contact_id: ann?.id, total: 10 },
      { contact_id: bob?.id, total: 20 },
      { contact_id: null, total: 5 },
    ])
    .select('id, order_number');
  if (e2 || !orders) throw new Error(`seed orders: ${e2?.message}`);
  // Numbers are the organization's own sequence: ORD-000001… in insertion order.
  const [o1, o2] = orders as { id: string }[];
  const { error: e3 } = await db.from('order_items').insert([
    { order_id: o1?.id, name: 'widget', quantity: 2 },
    { order_id: o1?.id, name: 'gadget', quantity: 1 },
    { order_id: o2?.id, name: 'widget', quantity: 1 },
  ]);
  if (e3) throw new Error(`seed items: ${e3.message}`);
  const cancel = await db
    .from('orders')
    .update({ status: 'cancelled' })
    .eq('id', (orders[2] as { id: string }).id);
  if (cancel.error) throw new Error(`cancel: ${cancel.error.message}`);
}

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Embedders Ltd');
  stranger = await signUp(svc, 'Other Embedders');
  for (const s of [owner, stranger]) {
    await call(svc, 'POST', '/functions/v1/organization-plan', {
      token: svc.serviceRoleKey,
      body: { organization_id: orgOf(s), plan: 'growth' },
    });
  }
  await seedOrders(owner);
  // The stranger's rows carry the same names: any leak would show as an extra row.
  await seedOrders(stranger);
});
afterAll(() => svc?.stop());

const numbers = (rows: unknown) => (rows as { order_number: string }[]).map((r) => r.order_number).sort();

describe('embedding with join hints', () => {
  it('!inner keeps only the parents whose children match the embedded filter', async () => {
    const { data, error } = await rest(owner.access_token)
      .from('orders')
      .select('order_number, order_items!inner(name)')
      .eq('order_items.name', 'gadget');
    expect(error).toBeNull();
    expect(data).toEqual([{ order_number: 'ORD-000001', order_items: [{ name: 'gadget' }] }]);
  });

  it('!left (the default) keeps every parent and filters only the children', async () => {
    const { data, error } = await rest(owner.access_token)
      .from('orders')
      .select('order_number, order_items!left(name)')
      .eq('order_items.name', 'gadget')
      .order('order_number');
    expect(error).toBeNull();
    expect(data).toEqual([
      { order_number: 'ORD-000001', order_items: [{ name: 'gadget' }] },
      { order_number: 'ORD-000002', order_items: [] },
      { order_number: 'ORD-000003', order_items: [] },
    ]);
  });

  it('!inner without a filter drops parents that have no children, and the count agrees', async () => {
    const { data, error, count } = await rest(owner.access_token)
      .from('orders')
      .select('order_number, order_items!inner(name)', { count: 'exact' });
    expect(error).toBeNull();
    expect(numbers(data)).toEqual(['ORD-000001', 'ORD-000002']);
    expect(count).toBe(2);
  });

  it('an empty !inner() embed filters the parents and returns nothing of the children', async () => {
    const { data, error } = await rest(owner.access_token)
      .from('orders')
      .select('order_number, order_items!inner()')
      .eq('order_items.name', 'widget')
      .order('order_number');
    expect(error).toBeNull();
    expect(data).toEqual([{ order_number: 'ORD-000001' }, { order_number: 'ORD-000002' }]);
  });

  it('names the foreign key beside the join: contacts!contact_id!inner', async () => {
    const { data, error } = await rest(owner.access_token)
      .from('orders')
      .select('order_number, customer:contacts!contact_id!inner(first_name)')
      .eq('customer.first_name', 'Ann');
    expect(error).toBeNull();
    expect(data).toEqual([{ order_number: 'ORD-000001', customer: { first_name: 'Ann' } }]);
  });

  it('answers PGRST200 for a hint that names no relationship, and PGRST108 for a filter on an embed not selected', async () => {
    const wrongKey = await rest(owner.access_token)
      .from('orders')
      .select('order_number, contacts!nope(first_name)');
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.error?.code).toBe('PGRST200');
    const notEmbedded = await rest(owner.access_token)
      .from('orders')
      .select('order_number')
      .eq('order_items.name', 'x');
    expect(notEmbedded.status).toBe(400);
    expect(notEmbedded.error?.code).toBe('PGRST108');
  });

  it('filters parents by whether an embedded resource has rows: not.is.null and is.null', async () => {
    const some = await rest(owner.access_token)
      .from('orders')
      .select('order_number, order_items(name)')
      .not('order_items', 'is', null);
    expect(some.error).toBeNull();
    expect(numbers(some.data)).toEqual(['ORD-000001', 'ORD-000002']);
    const none = await rest(owner.access_token)
      .from('orders')
      .select('order_number, order_items(name)')
      .is('order_items', null);
    expect(numbers(none.data)).toEqual(['ORD-000003']);
    const badOp = await rest(owner.access_token)
      .from('orders')
      .select('order_number, order_items(name)')
      .eq('order_items', 'x');
    expect(badOp.status).toBe(400);
    expect(badOp.error?.code).toBe('PGRST120');
  });
});

describe('errors inside an embedded resource', () => {
  it('a value the column cannot hold names the embedded column and its type', async () => {
    const r = await rest(owner.access_token)
      .from('orders')
      .select('order_number, order_items!inner(quantity)')
      .eq('order_items.quantity', 'lots');
    expect(r.status).toBe(400);
    expect(r.error?.code).toBe('22P02');
    expect(r.error?.message).toMatch(
      /^Column "order_items\.quantity": invalid input syntax for type integer: "lots"/,
    );
  });
});

describe('spread embeds', () => {
  it('...contacts(first_name) puts the customer’s columns beside the order’s, null where there is none', async () => {
    const { data, error } = await rest(owner.access_token)
      .from('orders')
      .select('order_number, ...contacts(first_name, surname:last_name)')
      .order('order_number');
    expect(error).toBeNull();
    expect(data).toEqual([
      { order_number: 'ORD-000001', first_name: 'Ann', surname: 'Vip' },
      { order_number: 'ORD-000002', first_name: 'Bob', surname: 'Plain' },
      { order_number: 'ORD-000003', first_name: null, surname: null },
    ]);
  });

  it('...contacts!inner(…) drops orders without a customer and filters by its columns', async () => {
    const { data, error } = await rest(owner.access_token)
      .from('orders')
      .select('order_number, ...contacts!inner(first_name)')
      .eq('contacts.first_name', 'Bob');
    expect(error).toBeNull();
    expect(data).toEqual([{ order_number: 'ORD-000002', first_name: 'Bob' }]);
  });

  it('refuses to spread a to-many relationship (PGRST119)', async () => {
    const r = await rest(owner.access_token).from('orders').select('order_number, ...order_items(name)');
    expect(r.status).toBe(400);
    expect(r.error?.code).toBe('PGRST119');
  });
});

describe('aggregates', () => {
  it('count() and total.sum() grouped by the plain columns beside them', async () => {
    const { data: orders } = await rest(owner.access_token).from('orders').select('status, total');
    const expected = new Map<string, { count: number; sum: number }>();
    for (const o of orders as { status: string; total: number }[]) {
      const g = expected.get(o.status) ?? { count: 0, sum: 0 };
      expected.set(o.status, { count: g.count + 1, sum: g.sum + Number(o.total) });
    }
    const { data, error } = await rest(owner.access_token)
      .from('orders')
      .select('status, count(), total.sum()')
      .order('status');
    expect(error).toBeNull();
    expect(data).toEqual(
      [...expected].sort(([a], [b]) => a.localeCompare(b)).map(([status, g]) => ({ status, ...g })),
    );
    expect(expected.size).toBe(2); // pending and cancelled: the grouping is really exercised
  });

  it('aggregates without plain columns give one row; aliases and casts apply to the result', async () => {
    const { data, error } = await rest(owner.access_token)
      .from('order_items')
      .select('lines:count(), units:quantity.sum()::text');
    expect(error).toBeNull();
    expect(data).toEqual([{ lines: 3, units: '4' }]);
  });

  it('aggregates inside an embedded resource, per parent', async () => {
    const { data, error } = await rest(owner.access_token)
      .from('orders')
      .select('order_number, order_items(quantity.sum())')
      .order('order_number');
    expect(error).toBeNull();
    expect(data).toEqual([
      { order_number: 'ORD-000001', order_items: [{ sum: 3 }] },
      { order_number: 'ORD-000002', order_items: [{ sum: 1 }] },
      { order_number: 'ORD-000003', order_items: [{ sum: null }] },
    ]);
  });

  it('refuses an aggregate beside an embedded resource, and sum() without a column', async () => {
    const mixed = await rest(owner.access_token).from('orders').select('count(), order_items(name)');
    expect(mixed.status).toBe(400);
    expect(mixed.error?.code).toBe('PGRST100');
    const bare = await call(svc, 'GET', '/rest/v1/orders?select=sum()', { token: owner.access_token });
    expect(bare.status).toBe(400);
    expect(bare.json.code).toBe('PGRST100');
  });
});

describe('counts', () => {
  it('for a tenant, planned and estimated counts are exact: an estimate would come from other tenants’ statistics', async () => {
    for (const count of ['planned', 'estimated'] as const) {
      const r = await rest(owner.access_token).from('orders').select('order_number', { count }).limit(2);
      expect(r.error).toBeNull();
      expect(r.data).toHaveLength(2);
      expect(r.count).toBe(3);
    }
  });

  it('for the service role, count=planned is the planner’s estimate, never below the page', async () => {
    const r = await rest(svc.serviceRoleKey)
      .from('orders')
      .select('order_number', { count: 'planned' })
      .limit(2);
    expect(r.error).toBeNull();
    expect(r.data).toHaveLength(2);
    expect(Number.isInteger(r.count)).toBe(true);
    expect(r.count).toBeGreaterThanOrEqual(2);
  });

  it('counts groups when the select aggregates, whatever the order of its items, and pages through them', async () => {
    for (const select of ['status, count()', 'count(), status']) {
      const r = await rest(owner.access_token).from('orders').select(select, { count: 'exact' });
      expect(r.error).toBeNull();
      expect(r.count).toBe(2);
    }
    const second = await rest(owner.access_token)
      .from('orders')
      .select('status, count()', { count: 'exact' })
      .order('status')
      .range(1, 1);
    expect(second.status).toBe(206);
    expect(second.data).toEqual([{ status: 'pending', count: 2 }]);
    expect(second.count).toBe(2);
  });

  it('a select that returns nothing of the row gives empty objects, not a made-up column', async () => {
    const { data, error } = await rest(owner.access_token).from('orders').select('order_items!inner()');
    expect(error).toBeNull();
    expect(data).toEqual([{}, {}]);
  });

  it('a stranger counts and aggregates only their own rows', async () => {
    const { data } = await rest(stranger.access_token).from('order_items').select('count()');
    expect(data).toEqual([{ count: 3 }]);
    const { count } = await rest(stranger.access_token)
      .from('orders')
      .select('*', { count: 'exact', head: true });
    expect(count).toBe(3);
  });
});

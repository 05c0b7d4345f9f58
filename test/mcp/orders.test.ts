import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/db.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let writer: Client;
let reader: Client;
let agentKeyId: string;
let other: Session;
let stranger: Client;

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Orders Ltd');
  await setPlan(svc, owner, 'starter');
  const w = await agentToken(svc, owner, ['write']);
  agentKeyId = JSON.parse(Buffer.from(w.token.split('.')[1] as string, 'base64url').toString()).sub;
  writer = await mcpClient(svc, w.token);
  reader = await mcpClient(svc, (await agentToken(svc, owner, ['read'])).token);
  other = await signUp(svc, 'Rivals Ltd');
  await setPlan(svc, other, 'starter');
  stranger = await mcpClient(svc, (await agentToken(svc, other, ['write'])).token);
});
afterAll(async () => {
  await Promise.all([writer?.close(), reader?.close(), stranger?.close()]);
  await svc?.stop();
});

const rest = (session: Session, method: string, path: string, body?: unknown) =>
  call(svc, method, `/rest/v1/${path}`, {
    token: session.access_token,
    body,
    headers: { prefer: 'return=representation' },
  });

const newItem = async (session: Session, fields: Record<string, unknown>) =>
  (await rest(session, 'POST', 'inventory_items', fields)).json[0];

const basics = { address: '1 Main St, Springfield', phone_number: '+1 415 555 0100' };
const createOrder = (client: Client, args: Record<string, unknown>) =>
  tool(client, 'svc_create_order', { ...basics, ...args });

describe('svc_create_order', () => {
  it('numbers orders per organization, stores the delivery fields and computes totals from the lines', async () => {
    const fresh = await signUp(svc, 'Numbering Ltd');
    await setPlan(svc, fresh, 'starter');
    const agent = await mcpClient(svc, (await agentToken(svc, fresh, ['write'])).token);
    const r = await createOrder(agent, {
      items: [
        { name: 'Mug', quantity: 2, unit_price: 7.5 },
        { name: 'Poster', quantity: 1, unit_price: 12.25 },
      ],
      currency: 'eur',
      notes: 'gift wrap',
    });
    expect(r.isError).toBe(false);
    expect(r.body.order_number).toBe('ORD-000001');
    expect(r.body.order).toMatchObject({
      order_number: 'ORD-000001',
      organization_id: orgOf(fresh),
      status: 'pending',
      shipping_address: '1 Main St, Springfield',
      shipping_phone_number: '+14155550100',
      currency: 'EUR',
      subtotal: 27.25,
      total: 27.25,
      notes: 'gift wrap',
      source: 'mcp',
    });
    expect(r.body.order.items.map((i: { total: number }) => i.total)).toEqual([15, 12.25]);
    expect(r.body.order.status_history).toEqual([
      expect.objectContaining({
        from_status: null,
        to_status: 'pending',
        actor: expect.stringMatching(/^agent:/),
      }),
    ]);
    const second = await createOrder(agent, { items: [{ name: 'Mug', quantity: 1 }] });
    expect(second.body.order_number).toBe('ORD-000002');
    await agent.close();
  });

  // Only PostgreSQL runs the creations at once; on PGlite their transactions never overlap, and
  // numbering one after another is the test above.
  it.skipIf(!onPostgres())(
    'hands out distinct consecutive numbers to concurrent creations, per organization',
    async () => {
      const a = await signUp(svc, 'Rush A');
      const b = await signUp(svc, 'Rush B');
      await setPlan(svc, a, 'starter');
      await setPlan(svc, b, 'starter');
      const ca = await mcpClient(svc, (await agentToken(svc, a, ['write'])).token);
      const cb = await mcpClient(svc, (await agentToken(svc, b, ['write'])).token);
      const results = await Promise.all([
        ...Array.from({ length: 10 }, () => createOrder(ca, { items: [{ name: 'Rush', quantity: 1 }] })),
        ...Array.from({ length: 5 }, () => createOrder(cb, { items: [{ name: 'Rush', quantity: 1 }] })),
      ]);
      expect(results.every((r) => !r.isError)).toBe(true);
      const numbers = (rs: typeof results) => rs.map((r) => r.body.order_number).sort();
      expect(numbers(results.slice(0, 10))).toEqual(
        Array.from({ length: 10 }, (_, i) => `ORD-${String(i + 1).padStart(6, '0')}`),
      );
      expect(numbers(results.slice(10))).toEqual([
        'ORD-000001',
        'ORD-000002',
        'ORD-000003',
        'ORD-000004',
        'ORD-000005',
      ]);
      await Promise.all([ca.close(), cb.close()]);
    },
  );

  it('links lines by item_id, else by name (case-insensitive), else by SKU, else a new draft item', async () => {
    const byName = await newItem(owner, { name: 'Blue Kettle', sku: 'KET-1', unit_price: 30 });
    const bySku = await newItem(owner, { name: 'Toaster deluxe', sku: 'TST-9', unit_price: 45 });
    const byId = await newItem(owner, { name: 'Spatula', unit_price: 3 });
    const r = await createOrder(writer, {
      items: [
        { name: 'blue kettle', quantity: 1 },
        { name: 'That toaster', sku: 'tst-9', quantity: 2 },
        { item_id: byId.id, name: 'Any name', quantity: 4, unit_price: 2.5 },
        { name: 'Mystery Gadget', sku: 'MYS-1', quantity: 1, unit_price: 9.99 },
      ],
    });
    expect(r.isError).toBe(false);
    expect(r.body.warnings).toEqual([]);
    const [kettle, toaster, spatula, mystery] = r.body.order.items;
    expect(kettle).toMatchObject({ item_id: byName.id, unit_price: 30, auto_created: false });
    expect(toaster).toMatchObject({ item_id: bySku.id, unit_price: 45, total: 90, auto_created: false });
    expect(spatula).toMatchObject({ item_id: byId.id, unit_price: 2.5, auto_created: false });
    expect(mystery).toMatchObject({ auto_created: true, item_id: expect.any(String), unit_price: 9.99 });
    expect(r.body.order.total).toBe(30 + 90 + 10 + 9.99);
    const drafts = await tool(reader, 'svc_list_inventory', { status: 'draft', name: 'Mystery' });
    expect(drafts.body.items).toEqual([
      expect.objectContaining({ id: mystery.item_id, sku: 'MYS-1', auto_created: true, unit_price: 9.99 }),
    ]);
    // The next order for the same product links to that draft instead of making another.
    const again = await createOrder(writer, { items: [{ name: 'MYSTERY GADGET', quantity: 1 }] });
    expect(again.body.order.items[0]).toMatchObject({ item_id: mystery.item_id, auto_created: false });
  });

  it('matches the customer by email or phone, else creates a contact, and keeps who ordered on the order', async () => {
    const known = (
      await tool(writer, 'svc_create_contact', { first_name: 'Known', email: 'known@cust.example' })
    ).body.contact;
    const byEmail = await createOrder(writer, {
      customer_email: 'KNOWN@cust.example',
      customer_name: 'K',
      items: [{ name: 'x', quantity: 1 }],
    });
    expect(byEmail.body.order).toMatchObject({ contact_id: known.id, customer_email: 'known@cust.example' });
    const phoned = (
      await tool(writer, 'svc_create_contact', { first_name: 'Phoned', phone: '+4915112345678' })
    ).body.contact;
    const byPhone = await createOrder(writer, {
      customer_phone: '+49 151 1234 5678',
      items: [{ name: 'x', quantity: 1 }],
    });
    expect(byPhone.body.order.contact_id).toBe(phoned.id);
    const brandNew = await createOrder(writer, {
      customer_name: 'Zoe Quinn Adams',
      customer_email: 'zoe@new.example',
      items: [{ name: 'x', quantity: 1 }],
    });
    const created = await tool(reader, 'svc_get_contact', { contact_id: brandNew.body.order.contact_id });
    expect(created.body.contact).toMatchObject({
      first_name: 'Zoe',
      last_name: 'Quinn Adams',
      email: 'zoe@new.example',
      source: 'order',
    });
    expect(created.body.recent_orders).toEqual([
      expect.objectContaining({ order_number: brandNew.body.order_number, status: 'pending' }),
    ]);
  });

  it('refuses another organization’s contact as not_found and writes nothing', async () => {
    const theirs = (await tool(stranger, 'svc_create_contact', { first_name: 'Theirs' })).body.contact;
    const before = (await rest(owner, 'GET', 'orders?select=id')).json.length;
    const viaContact = await createOrder(writer, {
      contact_id: theirs.id,
      items: [{ name: 'x', quantity: 1 }],
    });
    expect(viaContact.body).toMatchObject({ error: 'not_found', message: expect.stringMatching(/contact/) });
    expect(JSON.stringify(viaContact.body)).not.toContain('Theirs');
    expect((await rest(owner, 'GET', 'orders?select=id')).json.length).toBe(before);
  });

  it('never links a line to another organization’s item: it matches by name instead and says so', async () => {
    const theirItem = await newItem(other, { name: 'Their widget', unit_price: 99 });
    const r = await createOrder(writer, {
      items: [{ item_id: theirItem.id, name: 'Widget of ours', quantity: 1 }],
    });
    expect(r.isError).toBe(false);
    const line = r.body.order.items[0];
    expect(line.item_id).not.toBe(theirItem.id);
    expect(line).toMatchObject({ auto_created: true, unit_price: 0 });
    expect(r.body.warnings).toEqual([
      expect.objectContaining({
        code: 'not_found',
        line: 0,
        message: expect.stringMatching(/matched by name/),
      }),
    ]);
    expect(JSON.stringify(r.body)).not.toContain('Their widget');
  });

  it('takes an item’s price only in the order’s currency', async () => {
    const euro = await newItem(owner, { name: 'Euro thing', unit_price: 10, currency: 'EUR' });
    const r = await createOrder(writer, { currency: 'USD', items: [{ name: 'euro thing', quantity: 2 }] });
    expect(r.body.order.items[0]).toMatchObject({ item_id: euro.id, unit_price: 0 });
    expect(r.body.warnings).toEqual([expect.objectContaining({ code: 'currency_mismatch', line: 0 })]);
    const inEuro = await createOrder(writer, {
      currency: 'EUR',
      items: [{ name: 'euro thing', quantity: 2 }],
    });
    expect(inEuro.body.order.total).toBe(20);
    expect(inEuro.body.warnings).toEqual([]);
  });

  it('refuses malformed orders with validation_error', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ address: undefined, items: [{ name: 'x', quantity: 1 }] }, 'address'],
      [{ items: [] }, 'items'],
      [{ items: [{ name: 'x', quantity: 0 }] }, 'items.0.quantity'],
      [{ items: [{ name: 'x', quantity: 1, unit_price: -1 }] }, 'items.0.unit_price'],
      [{ items: [{ name: 'x', quantity: 1 }], currency: 'euro' }, 'currency'],
      [{ phone_number: 'call me', items: [{ name: 'x', quantity: 1 }] }, 'phone_number'],
    ];
    for (const [args, path] of cases) {
      const r = await createOrder(writer, args);
      expect(r.body.error, path).toBe('validation_error');
      expect(
        r.body.details.issues.map((i: { path: string }) => i.path),
        path,
      ).toContain(path);
    }
  });

  it('is refused to a read-only agent', async () => {
    const r = await createOrder(reader, { items: [{ name: 'x', quantity: 1 }] });
    expect(r.body).toMatchObject({ error: 'insufficient_scope', details: { required_scope: 'write' } });
  });

  it('still creates the order when inventory cannot be linked (plan ceiling), and says why', async () => {
    const full = await signUp(svc, 'Full Shelves Ltd');
    await setPlan(svc, full, 'starter');
    const items = Array.from({ length: 300 }, (_, i) => ({ name: `stock ${i}` }));
    expect(
      (await call(svc, 'POST', '/rest/v1/inventory_items', { token: full.access_token, body: items })).status,
    ).toBe(201);
    const agent = await mcpClient(svc, (await agentToken(svc, full, ['write'])).token);
    const r = await createOrder(agent, {
      items: [
        { name: 'stock 7', quantity: 1 },
        { name: 'Brand new thing', quantity: 2, unit_price: 5 },
      ],
    });
    expect(r.isError).toBe(false);
    expect(r.body.order.items[0].item_id).toEqual(expect.any(String));
    expect(r.body.order.items[1]).toMatchObject({ item_id: null, auto_created: false, total: 10 });
    expect(r.body.warnings).toEqual([
      expect.objectContaining({
        code: 'plan_limit_exceeded',
        line: 1,
        message: expect.stringMatching(/Brand new thing/),
      }),
    ]);
    await agent.close();
  });
});

describe('svc_update_order_status', () => {
  const stockOf = async (client: Client, item_id: string) =>
    (await tool(client, 'svc_check_stock', { item_id })).body;

  it('walks the lifecycle, moving stock and recording who and why', async () => {
    const item = await newItem(owner, {
      name: 'Lifecycle lamp',
      sku: 'LAMP-1',
      quantity_on_hand: 10,
      reorder_point: 8,
    });
    const order = (await createOrder(writer, { items: [{ item_id: item.id, name: 'lamp', quantity: 3 }] }))
      .body.order;
    const step = (status: string, note?: string) =>
      tool(writer, 'svc_update_order_status', { order_id: order.id, status, ...(note ? { note } : {}) });

    const confirmed = await step('confirmed', 'paid by card');
    expect(confirmed.body).toMatchObject({
      previous_status: 'pending',
      changed: true,
      order: { status: 'confirmed' },
    });
    expect(await stockOf(reader, item.id)).toMatchObject({
      quantity_on_hand: 10,
      quantity_reserved: 3,
      available: 7,
      backordered: 0,
      needs_reorder: true,
    });
    await step('processing');
    await step('shipped', 'DHL 123');
    expect(await stockOf(reader, item.id)).toMatchObject({
      quantity_on_hand: 7,
      quantity_reserved: 0,
      available: 7,
    });
    await step('delivered');
    const returned = await step('returned', 'damaged');
    expect(await stockOf(reader, item.id)).toMatchObject({ quantity_on_hand: 10, quantity_reserved: 0 });
    expect(returned.body.order.status_history.map((e: { to_status: string }) => e.to_status)).toEqual([
      'pending',
      'confirmed',
      'processing',
      'shipped',
      'delivered',
      'returned',
    ]);
    expect(returned.body.order.status_history[1]).toMatchObject({
      from_status: 'pending',
      note: 'paid by card',
      actor: `agent:${agentKeyId}`,
    });
  });

  it('refuses a move the lifecycle does not allow, naming the allowed next states', async () => {
    const order = (await createOrder(writer, { items: [{ name: 'x', quantity: 1 }] })).body.order;
    const r = await tool(writer, 'svc_update_order_status', { order_id: order.id, status: 'shipped' });
    expect(r).toMatchObject({
      isError: true,
      body: {
        error: 'invalid_transition',
        details: { from: 'pending', to: 'shipped', allowed: ['cancelled', 'confirmed'] },
      },
    });
    await tool(writer, 'svc_update_order_status', { order_id: order.id, status: 'cancelled' });
    const terminal = await tool(writer, 'svc_update_order_status', {
      order_id: order.id,
      status: 'confirmed',
    });
    expect(terminal.body.details).toMatchObject({ from: 'cancelled', allowed: [] });
  });

  it('changes nothing when asked for the current status', async () => {
    const order = (await createOrder(writer, { items: [{ name: 'x', quantity: 1 }] })).body.order;
    const r = await tool(writer, 'svc_update_order_status', { order_id: order.id, status: 'pending' });
    expect(r.body).toMatchObject({ changed: false, previous_status: 'pending' });
    expect(r.body.order.status_history).toHaveLength(1);
  });

  it('reports a backorder when confirmed orders exceed stock', async () => {
    const item = await newItem(owner, { name: 'Scarce', quantity_on_hand: 2 });
    const order = (await createOrder(writer, { items: [{ item_id: item.id, name: 'Scarce', quantity: 5 }] }))
      .body.order;
    await tool(writer, 'svc_update_order_status', { order_id: order.id, status: 'confirmed' });
    expect(await stockOf(reader, item.id)).toMatchObject({ available: -3, backordered: 3 });
  });

  it('holds REST writes to the same lifecycle and stock rules', async () => {
    const item = await newItem(owner, { name: 'Rest rule', quantity_on_hand: 4 });
    const order = (await createOrder(writer, { items: [{ item_id: item.id, name: 'r', quantity: 1 }] })).body
      .order;
    const jump = await rest(owner, 'PATCH', `orders?id=eq.${order.id}`, { status: 'delivered' });
    expect(jump.status).toBe(409);
    expect(jump.json).toMatchObject({
      error: 'invalid_transition',
      details: { from: 'pending', to: 'delivered' },
    });
    expect((await rest(owner, 'PATCH', `orders?id=eq.${order.id}`, { status: 'confirmed' })).status).toBe(
      200,
    );
    expect(await stockOf(reader, item.id)).toMatchObject({ quantity_reserved: 1 });
    const addLine = await rest(owner, 'POST', 'order_items', {
      order_id: order.id,
      name: 'late',
      quantity: 1,
    });
    expect(addLine.status).toBe(409);
    expect(addLine.json.error).toBe('order_locked');
  });

  it('cannot touch another organization’s order, and a read-only agent cannot move one', async () => {
    const order = (await createOrder(writer, { items: [{ name: 'x', quantity: 1 }] })).body.order;
    const theirs = await tool(stranger, 'svc_update_order_status', {
      order_id: order.id,
      status: 'cancelled',
    });
    expect(theirs.body.error).toBe('not_found');
    const ro = await tool(reader, 'svc_update_order_status', { order_id: order.id, status: 'cancelled' });
    expect(ro.body.error).toBe('insufficient_scope');
    expect((await tool(reader, 'svc_get_order', { order_id: order.id })).body.order.status).toBe('pending');
  });
});

describe('svc_get_order and svc_list_orders', () => {
  it('reads an order by id or by number, and never another tenant’s', async () => {
    const order = (await createOrder(writer, { items: [{ name: 'Readable', quantity: 2, unit_price: 1 }] }))
      .body.order;
    const byId = await tool(reader, 'svc_get_order', { order_id: order.id });
    expect(byId.body.order).toMatchObject({
      id: order.id,
      items: [expect.objectContaining({ name: 'Readable' })],
    });
    const digits = order.order_number.replace(/^ORD-0*/, '');
    const byNumber = await tool(reader, 'svc_get_order', { order_number: digits });
    expect(byNumber.body.order.id).toBe(order.id);
    expect((await tool(reader, 'svc_get_order', {})).body.error).toBe('validation_error');
    const peek = await tool(stranger, 'svc_get_order', { order_id: order.id });
    expect(peek.body.error).toBe('not_found');
    const peekByNumber = await tool(stranger, 'svc_get_order', { order_number: 'ORD-999999' });
    expect(peekByNumber.body.error).toBe('not_found');
  });

  it('filters by status, contact, number and date range, and pages to the end', async () => {
    const shop = await signUp(svc, 'Listing Ltd');
    await setPlan(svc, shop, 'starter');
    const agent = await mcpClient(svc, (await agentToken(svc, shop, ['write'])).token);
    const made: { id: string; order_number: string }[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(
        (
          await createOrder(agent, {
            customer_email: i < 2 ? 'repeat@buyer.example' : `buyer${i}@buyer.example`,
            items: [{ name: 'x', quantity: 1 + i }],
          })
        ).body.order,
      );
    }
    await tool(agent, 'svc_update_order_status', { order_id: made[0]?.id, status: 'confirmed' });
    const list = async (args: Record<string, unknown>) => (await tool(agent, 'svc_list_orders', args)).body;

    expect((await list({ status: 'confirmed' })).orders.map((o: { id: string }) => o.id)).toEqual([
      made[0]?.id,
    ]);
    expect((await list({ status: ['pending', 'confirmed'] })).orders).toHaveLength(5);
    const contact = (await tool(agent, 'svc_get_order', { order_id: made[0]?.id })).body.order.contact_id;
    expect((await list({ contact_id: contact })).orders.map((o: { id: string }) => o.id)).toEqual([
      made[1]?.id,
      made[0]?.id,
    ]);
    expect((await list({ order_number: made[3]?.order_number })).orders).toEqual([
      expect.objectContaining({ id: made[3]?.id, item_count: 1 }),
    ]);
    expect((await list({ created_after: '2000-01-01', created_before: '2000-12-31' })).orders).toEqual([]);
    expect(
      (await list({ created_after: new Date(Date.now() - 3600_000).toISOString() })).orders,
    ).toHaveLength(5);
    expect((await tool(agent, 'svc_list_orders', { created_after: 'last tuesday' })).body.error).toBe(
      'validation_error',
    );

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await list({ limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.orders.map((o: { id: string }) => o.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(made.map((o) => o.id).reverse());
    await agent.close();
  });
});

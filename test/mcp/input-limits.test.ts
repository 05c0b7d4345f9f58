// One set of input limits for every entry point (src/domain/input-limits.ts, migrations/0014):
// what svc_create_order refuses, a /rest/v1 insert is refused too, with a 400 that names the
// column; and what each entry point creates says where it came from (`source`).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let agent: Client;
let orderId: string;

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Limits Ltd');
  await setPlan(svc, owner, 'starter');
  agent = await mcpClient(svc, (await agentToken(svc, owner, ['write'])).token);
  const order = await rest('POST', 'orders', { notes: 'for limits' });
  orderId = order.json[0].id;
});
afterAll(async () => {
  await agent?.close();
  await svc?.stop();
});

const rest = (method: string, table: string, body: unknown) =>
  call(svc, method, `/rest/v1/${table}`, {
    token: owner.access_token,
    body,
    headers: { prefer: 'return=representation' },
  });

const order = (line: Record<string, unknown>) =>
  tool(agent, 'svc_create_order', {
    address: '1 Main St',
    phone_number: '+14155550100',
    items: [{ name: 'Mug', quantity: 1, ...line }],
  });

describe('an order line past a limit', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['quantity 0', { quantity: 0 }, 'quantity'],
    ['quantity 2,000,000', { quantity: 2_000_000 }, 'quantity'],
    ['a 301-character name', { name: 'n'.repeat(301) }, 'name'],
  ];

  it.each(cases)('%s is refused by /rest/v1 with a 400 naming the column', async (_, line, column) => {
    const r = await rest('POST', 'order_items', { order_id: orderId, name: 'Mug', quantity: 1, ...line });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: '23514', details: { column } });
    expect(r.json.message).toContain(column);
  });

  it.each(cases)('%s is refused by svc_create_order, naming the field', async (_, line, column) => {
    const r = await order(line);
    expect(r.isError).toBe(true);
    expect(r.body.error).toBe('validation_error');
    expect(r.body.details.issues.map((i: { path: string }) => i.path)).toEqual([`items.0.${column}`]);
  });

  it('is stored at the limit by both', async () => {
    const viaRest = await rest('POST', 'order_items', {
      order_id: orderId,
      name: 'n'.repeat(300),
      quantity: 1_000_000,
    });
    expect(viaRest.status).toBe(201);
    const viaMcp = await order({ name: 'n'.repeat(300), quantity: 1_000_000 });
    expect(viaMcp.isError).toBe(false);
    expect(viaMcp.body.order.items[0]).toMatchObject({ quantity: 1_000_000 });
  });
});

describe('an order past 200 lines', () => {
  it('is refused by svc_create_order and by /rest/v1', async () => {
    const items = Array.from({ length: 201 }, (_, i) => ({ name: `Line ${i}`, quantity: 1 }));
    const r = await tool(agent, 'svc_create_order', { address: 'a', phone_number: '+14155550100', items });
    expect(r.isError).toBe(true);
    expect(r.body.details.issues[0].path).toBe('items');
    const fresh = (await rest('POST', 'orders', { notes: 'big' })).json[0].id;
    const rows = items.map((l) => ({ ...l, order_id: fresh }));
    const viaRest = await rest('POST', 'order_items', rows);
    expect(viaRest.status).toBe(400);
    expect(viaRest.json).toMatchObject({
      error: 'validation_error',
      message: expect.stringMatching(/at most 200 lines/),
      details: { issues: [{ path: 'order_id' }], limit: 200 },
    });
    const kept = await call(svc, 'GET', `/rest/v1/order_items?order_id=eq.${fresh}&select=id`, {
      token: owner.access_token,
    });
    expect(kept.json).toEqual([]); // all or nothing
  });
});

describe('contact tags', () => {
  it('over 100 characters are refused by /rest/v1 and by svc_create_contact', async () => {
    const long = 't'.repeat(101);
    const viaRest = await rest('POST', 'contacts', { first_name: 'Tess', tags: [long] });
    expect(viaRest.status).toBe(400);
    expect(viaRest.json).toMatchObject({ code: '23514', details: { column: 'tags' } });
    const viaMcp = await tool(agent, 'svc_create_contact', { first_name: 'Tess', tags: [long] });
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.body.details.issues[0].path).toBe('tags.0');
  });
});

describe('where a record came from', () => {
  it('is the entry point that created it: mcp for the tools, manual for /rest/v1', async () => {
    const viaMcp = await tool(agent, 'svc_create_contact', { first_name: 'Mona' });
    expect(viaMcp.body.contact.source).toBe('mcp');
    const viaRest = await rest('POST', 'contacts', { first_name: 'Rhea' });
    expect(viaRest.json[0].source).toBe('manual');
    const placed = await order({ name: 'Cup' });
    expect(placed.body.order.source).toBe('mcp');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// What protects: an order says whether it is delivered or picked up; a pickup needs no shipping
// address or phone and stores none, a delivery (the default, as before) needs both — through the
// dashboard's function and the MCP tool, whose input keeps the spec's `address` and
// `phone_number` (issue 30 §2).

let svc: TestService;
let owner: Session;
const items = [{ name: 'Sourdough loaf', quantity: 2 }];

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Pickup Bakery');
  await setPlan(svc, owner, 'starter');
});
afterAll(() => svc?.stop());

const order = (body: Record<string, unknown>) =>
  call(svc, 'POST', '/functions/v1/orders', { token: owner.access_token, body });

describe('pickup orders', () => {
  it('a pickup is created without an address or phone, and says it is a pickup', async () => {
    const r = await order({ fulfillment: 'pickup', customer_name: 'Ann', items });
    expect(r.status).toBe(201);
    expect(r.json.order).toMatchObject({
      fulfillment: 'pickup',
      shipping_address: null,
      shipping_phone_number: null,
    });
  });

  it('a delivery, the default, still needs the address and the phone, said for people', async () => {
    const r = await order({ items });
    expect(r.status).toBe(400);
    expect(r.json.details.issues).toEqual([
      { path: 'address', message: 'Enter the delivery address, or make the order a pickup' },
      { path: 'phone_number', message: 'Enter the delivery phone number, or make the order a pickup' },
    ]);
    const ok = await order({ address: '1 Main St', phone_number: '+14155550100', items });
    expect(ok.status).toBe(201);
    expect(ok.json.order.fulfillment).toBe('delivery');
  });

  it('the MCP tool takes a pickup with the spec’s input names unchanged', async () => {
    const { token } = await agentToken(svc, owner, ['read', 'write']);
    const client = await mcpClient(svc, token);
    const listed = (await client.listTools()).tools.find((t) => t.name === 'svc_create_order');
    const props = Object.keys((listed?.inputSchema as { properties: object } | undefined)?.properties ?? {});
    expect(props).toEqual(expect.arrayContaining(['address', 'phone_number', 'fulfillment', 'items']));
    const pickup = await tool(client, 'svc_create_order', { fulfillment: 'pickup', items });
    expect(pickup.isError).toBe(false);
    expect(pickup.body.order).toMatchObject({ fulfillment: 'pickup', shipping_address: null });
    const delivery = await tool(client, 'svc_create_order', {
      address: '2 Main St',
      phone_number: '+14155550101',
      items,
    });
    expect(delivery.body.order).toMatchObject({ fulfillment: 'delivery', shipping_address: '2 Main St' });
    await client.close();
  });
});

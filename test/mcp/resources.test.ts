import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_TRANSITIONS } from '../../src/domain/order-lifecycle.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let client: Client;
let token: string;
let keyPrefix: string;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Resourceful Ltd');
  ({ token, keyPrefix } = await agentToken(svc, owner, ['admin']));
  client = await mcpClient(svc, token);
});
afterAll(async () => {
  await client?.close();
  await svc?.stop();
});

// biome-ignore lint/suspicious/noExplicitAny: tests read whatever JSON came back
const read = async (uri: string): Promise<any> => {
  const { contents } = await client.readResource({ uri });
  expect(contents).toHaveLength(1);
  expect(contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
  return JSON.parse((contents[0] as { text: string }).text);
};

describe('svc://organization/info', () => {
  it('describes the organization, its plan, limits and usage, and the caller’s access', async () => {
    await call(svc, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      body: { first_name: 'Counted' },
    });
    const info = await read('svc://organization/info');
    expect(info.organization).toMatchObject({ id: orgOf(owner), name: 'Resourceful Ltd', plan: 'free' });
    expect(info.plan).toMatchObject({
      slug: 'free',
      name: 'Free',
      limits: { contacts: 50, mcp_scopes: ['read'] },
    });
    expect(info.usage.contacts).toMatchObject({ used: 1, limit: 50, remaining: 49, period: 'total' });
    expect(info.upgrade).toMatchObject({ recommended_plan: 'starter' });
    const claims = decodeJwt(token);
    expect(info.auth).toEqual({
      kind: 'agent',
      key_id: claims.sub,
      key_name: 'agent admin',
      key_prefix: keyPrefix,
      key_scopes: ['admin'],
      key_expires_at: expect.any(String),
      // The free plan caps an admin key to read.
      granted_scopes: ['read'],
      token_expires_at: new Date((claims.exp as number) * 1000).toISOString(),
    });
  });

  it('tells the agent why a write is refused on a read-only plan', async () => {
    const r = await tool(client, 'svc_create_contact', { first_name: 'Nope' });
    expect(r.body).toMatchObject({ error: 'insufficient_scope', details: { granted_scopes: ['read'] } });
  });
});

describe('svc://schema/*', () => {
  it('publishes the records as JSON Schema with the values they allow', async () => {
    const contacts = await read('svc://schema/contacts');
    expect(contacts.record.properties.email).toBeDefined();
    expect(contacts.record.required).toContain('id');
    expect(contacts.create_input.properties.phone.description).toMatch(/country code/);

    const orders = await read('svc://schema/orders');
    expect(orders.lifecycle).toEqual(ORDER_TRANSITIONS);
    expect(orders.terminal_statuses).toEqual(['cancelled', 'returned']);
    expect(orders.record.properties.status.enum).toEqual(Object.keys(ORDER_TRANSITIONS));
    expect(orders.record.properties.items.items.properties.auto_created.type).toBe('boolean');
    // A delivery needs address and phone_number, a pickup neither: only items is always required.
    expect(orders.create_input.required).toEqual(['items']);
    expect(Object.keys(orders.create_input.properties)).toEqual(
      expect.arrayContaining(['fulfillment', 'address', 'phone_number', 'items']),
    );
    expect(orders.stock_effects.confirmed).toMatch(/reserve/);

    const inventory = await read('svc://schema/inventory');
    expect(inventory.statuses).toEqual(['active', 'draft', 'archived']);
    expect(inventory.record.properties.quantity_reserved.type).toBe('integer');

    const social = await read('svc://schema/social');
    expect(social.platforms).toEqual(['twitter', 'linkedin', 'instagram', 'facebook']);
    expect(social.statuses).toEqual(['draft', 'scheduled', 'publishing', 'published', 'failed']);
    expect(social.editable_statuses).toEqual(['draft', 'scheduled']);
    expect(social.media.max_items_per_post).toBeGreaterThan(0);
    expect(social.minimum_plan).toBe('starter');
  });

  it('describes what each tool returns, which tools/list leaves out', async () => {
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'svc_get_contact')?.outputSchema).toBeUndefined();
    const contacts = await read('svc://schema/contacts');
    const get = contacts.results.svc_get_contact;
    expect(Object.keys(get.properties)).toEqual(['contact', 'recent_orders']);
    expect(Object.keys(get.properties.contact.properties)).toEqual(Object.keys(contacts.record.properties));
    expect(Object.keys(contacts.results)).toEqual([
      'svc_list_contacts',
      'svc_get_contact',
      'svc_create_contact',
      'svc_update_contact',
    ]);
    const orders = await read('svc://schema/orders');
    expect(orders.results.svc_create_order.required).toEqual(['order_number', 'order', 'warnings']);
    const inventory = await read('svc://schema/inventory');
    expect(inventory.results.svc_check_stock.properties.available.type).toBe('integer');
  });
});

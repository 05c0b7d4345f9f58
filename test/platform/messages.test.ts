import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSentence, constraintsWithSentences } from '../../src/platform/messages.ts';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// What protects: a value a person can get wrong is refused with a sentence for people, written
// once (src/platform/messages.ts), on /rest/v1, the functions and the MCP tools alike — never a
// CHECK's SQL, zod's "Too small: expected string…", a format name or `organization_id` — while
// machines keep `code`, `details.constraint` and `details.column`. The five refusals a new owner
// met in their first forms (issue 30 §2) are here, one test each.

let svc: TestService;
let owner: Session;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Plain Words Ltd');
});
afterAll(() => svc?.stop());

const rest = () =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${owner.access_token}` },
  });

/** Machine text a person must never read. */
const forPeople = (message: string | undefined) => {
  expect(message).toBeTruthy();
  expect(message).not.toMatch(/CHECK|::text|_check\b|organization_id|Too small|Too big|>=|ISO 8601|E\.164/);
};

describe('the first forms a new owner fills', () => {
  it('a contact phone that cannot be a number says how to write one', async () => {
    const { error, status } = await rest().from('contacts').insert({ first_name: 'Ann', phone: 'call me' });
    expect(status).toBe(400);
    forPeople(error?.message);
    expect(error?.message).toMatch(/phone number/i);
    expect(error).toMatchObject({
      code: '23514',
      details: { constraint: 'contacts_phone_check', column: 'phone' },
    });
  });

  it('a negative item price says the price cannot be negative', async () => {
    const { error, status } = await rest().from('inventory_items').insert({ name: 'Lamp', unit_price: -1 });
    expect(status).toBe(400);
    expect(error?.message).toBe('The price cannot be negative');
    expect(error).toMatchObject({
      code: '23514',
      details: { constraint: 'inventory_items_unit_price_check', column: 'unit_price' },
    });
  });

  it('an order without a delivery phone asks for it, through the function and the MCP tool', async () => {
    const order = { address: '1 Main St, Springfield', items: [{ name: 'Lamp', quantity: 1 }] };
    const sentence = 'Enter the delivery phone number, or make the order a pickup';
    const r = await call(svc, 'POST', '/functions/v1/orders', { token: owner.access_token, body: order });
    expect(r.status).toBe(400);
    expect(r.json.message).toBe(sentence);
    expect(r.json.details.issues).toEqual([{ path: 'phone_number', message: sentence }]);

    await setPlan(svc, owner, 'starter');
    const { token } = await agentToken(svc, owner, ['read', 'write']);
    const client = await mcpClient(svc, token);
    const t = await tool(client, 'svc_create_order', { ...order, phone_number: '' });
    expect(t.isError).toBe(true);
    expect(t.body.details.issues).toEqual([{ path: 'phone_number', message: sentence }]);
    await client.close();
  });

  it('a key expiry in the past says to choose a date, not a format', async () => {
    const r = await call(svc, 'POST', '/functions/v1/agent-api-key-create', {
      token: owner.access_token,
      body: { name: 'late', scopes: ['read'], expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(r.status).toBe(400);
    forPeople(r.json.message);
    expect(r.json.message).toMatch(/expiry date in the future/);
    expect(r.json.details.issues[0].path).toBe('expires_at');
  });

  it('a duplicate SKU names the SKU, never organization_id', async () => {
    expect((await rest().from('inventory_items').insert({ name: 'Desk', sku: 'DESK-1' })).error).toBeNull();
    const { error, status } = await rest().from('inventory_items').insert({ name: 'Desk 2', sku: 'DESK-1' });
    expect(status).toBe(409);
    forPeople(error?.message);
    expect(error?.message).toMatch(/already has this SKU/);
    expect(error).toMatchObject({
      code: '23505',
      details: { constraint: 'inventory_items_sku_key', column: 'sku' },
    });
  });

  it('zod’s defaults are replaced everywhere: a function’s too-long and wrong-kind values', async () => {
    const r = await call(svc, 'POST', '/functions/v1/orders', {
      token: owner.access_token,
      body: { address: 'x', phone_number: '+14155550100', items: [{ name: 'Lamp', quantity: 'two' }] },
    });
    expect(r.status).toBe(400);
    for (const issue of r.json.details.issues) forPeople(issue.message);
    expect(r.json.details.issues).toContainEqual({
      path: 'items.0.quantity',
      message: 'The quantity must be a number',
    });
  });
});

describe('the catalogue', () => {
  let fresh: FreshDatabase;
  beforeAll(async () => {
    fresh = await freshDatabase();
  });
  afterAll(() => fresh?.drop());

  it('has a sentence for every CHECK and unique key a person can trip', async () => {
    // The plan catalogue and sign-in attempts are written by the service only.
    const rows = await fresh.db.query<{ name: string }>(
      `select conname as name from pg_constraint c join pg_class t on t.oid = c.conrelid
        where t.relnamespace = 'public'::regnamespace and c.contype in ('c', 'u')
          and t.relname not in ('plans', 'agent_auth_attempts')
       union
       select i.relname from pg_index x join pg_class i on i.oid = x.indexrelid
         join pg_class t on t.oid = x.indrelid
        where t.relnamespace = 'public'::regnamespace and x.indisunique and not x.indisprimary
          and t.relname not in ('plans', 'agent_auth_attempts')`,
    );
    const known = constraintsWithSentences();
    // conversations_id_account_key only lets messages refer to their conversation's account.
    const missing = rows
      .map((r) => r.name)
      .filter((n) => !known.has(n) && n !== 'conversations_id_account_key');
    expect(missing).toEqual([]);
  });

  it('names exactly the values a list CHECK allows (the sentence is a copy of the SQL’s list)', async () => {
    const rows = await fresh.db.query<{ name: string; def: string }>(
      `select conname as name, pg_get_constraintdef(c.oid) as def from pg_constraint c
         join pg_class t on t.oid = c.conrelid
        where t.relnamespace = 'public'::regnamespace and c.contype = 'c'
          and t.relname not in ('plans', 'agent_auth_attempts')
          and pg_get_constraintdef(c.oid) like '%= ANY (ARRAY[%'`,
    );
    let compared = 0;
    for (const { name, def } of rows) {
      const allowed = [...def.matchAll(/'([^']*)'::text/g)].map((m) => m[1]);
      const sentence = checkSentence(name)?.message ?? '';
      const listed = sentence.match(/must be one of: (.*)$/)?.[1]?.split(', ');
      if (!listed) continue; // worded without the list (a message's type: "one the channel takes")
      compared++;
      expect([...listed].sort(), name).toEqual([...allowed].sort());
    }
    expect(compared).toBeGreaterThan(3);
  });
});

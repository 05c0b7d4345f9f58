import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let agent: Client;
let stranger: Client;
const items: Record<string, { id: string }> = {};

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Stock Ltd');
  agent = await mcpClient(svc, (await agentToken(svc, owner, ['read'])).token);
  const other = await signUp(svc, 'Elsewhere Ltd');
  await setPlan(svc, other, 'starter');
  stranger = await mcpClient(svc, (await agentToken(svc, other, ['write'])).token);
  const rows = [
    { name: 'Green Tea 100g', sku: 'TEA-GRN', quantity_on_hand: 50, reorder_point: 10 },
    { name: 'Black Tea 100g', sku: 'TEA-BLK', quantity_on_hand: 4, reorder_point: 10 },
    { name: 'Teapot', sku: 'POT-1', quantity_on_hand: 0, quantity_reserved: 2, reorder_point: 1 },
    { name: 'Old Kettle', sku: 'KET-OLD', status: 'archived' },
  ];
  const r = await insertRows(owner, 'inventory_items', rows);
  for (const row of r) items[row.sku] = row;
  await insertRows(owner, 'contacts', [
    { first_name: 'Teagan', last_name: 'Moss', email: 'teagan@moss.example', phone: '+353861234567' },
    { first_name: 'Tom', last_name: 'Potter', email: 'tom@potter.example', company: 'Tea Traders' },
  ]);
  await call(svc, 'POST', '/rest/v1/orders', { token: owner.access_token, body: { notes: 'first order' } });
});
/** Rows with different keys in one insert: each omitted column takes its default. */
async function insertRows(session: Session, table: string, rows: Record<string, unknown>[]) {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))].join(',');
  const r = await call(svc, 'POST', `/rest/v1/${table}?columns=${columns}`, {
    token: session.access_token,
    body: rows,
    headers: { prefer: 'return=representation,missing=default' },
  });
  if (r.status !== 201) throw new Error(JSON.stringify(r.json));
  return r.json;
}

afterAll(async () => {
  await Promise.all([agent?.close(), stranger?.close()]);
  await svc?.stop();
});

describe('svc_list_inventory', () => {
  const skus = async (args: Record<string, unknown>) =>
    (await tool(agent, 'svc_list_inventory', args)).body.items.map((i: { sku: string }) => i.sku);

  it('filters by name, SKU, status and low stock, and shows what is available', async () => {
    // One insert gives the items the same created_at, so compare these as sets.
    expect((await skus({ name: 'tea 100' })).sort()).toEqual(['TEA-BLK', 'TEA-GRN']);
    expect(await skus({ sku: 'tea-grn' })).toEqual(['TEA-GRN']);
    expect(await skus({ status: 'archived' })).toEqual(['KET-OLD']);
    expect((await skus({ low_stock: true, status: 'active' })).sort()).toEqual(['POT-1', 'TEA-BLK']);
    expect(await skus({ low_stock: false, status: 'active' })).toEqual(['TEA-GRN']);
    const pot = (await tool(agent, 'svc_list_inventory', { sku: 'POT-1' })).body.items[0];
    expect(pot).toMatchObject({ quantity_on_hand: 0, quantity_reserved: 2, available: -2 });
  });

  it('refuses a status it does not know and a cursor it did not issue', async () => {
    const bad = await tool(agent, 'svc_list_inventory', { status: 'sold_out' });
    expect(bad.body).toMatchObject({ error: 'validation_error', details: { issues: [{ path: 'status' }] } });
    const cursor = await tool(agent, 'svc_list_inventory', {
      cursor: Buffer.from('["x","y"]').toString('base64url'),
    });
    expect(cursor.body.error).toBe('validation_error');
    expect((await tool(stranger, 'svc_list_inventory', {})).body.items).toEqual([]);
  });

  it('pages to the end', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { id: string }[]; next_cursor: string | null } = (
        await tool(agent, 'svc_list_inventory', { limit: 3, ...(cursor ? { cursor } : {}) })
      ).body;
      seen.push(...page.items.map((i) => i.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(new Set(seen).size).toBe(4);
    expect(seen).toHaveLength(4);
  });
});

describe('svc_check_stock', () => {
  it('answers by item_id or SKU with on hand, reserved, available, backordered and reorder point', async () => {
    const bySku = await tool(agent, 'svc_check_stock', { sku: 'pot-1' });
    expect(bySku.body).toEqual({
      item_id: items['POT-1']?.id,
      name: 'Teapot',
      sku: 'POT-1',
      status: 'active',
      warehouse_id: expect.any(String),
      quantity_on_hand: 0,
      quantity_reserved: 2,
      available: -2,
      backordered: 2,
      reorder_point: 1,
      needs_reorder: true,
    });
    const byId = await tool(agent, 'svc_check_stock', { item_id: items['TEA-GRN']?.id });
    expect(byId.body).toMatchObject({ available: 50, backordered: 0, needs_reorder: false });
  });

  it('needs exactly one of item_id or sku, and never finds another tenant’s item', async () => {
    expect((await tool(agent, 'svc_check_stock', {})).body.error).toBe('validation_error');
    expect((await tool(agent, 'svc_check_stock', { sku: 'X', item_id: items['POT-1']?.id })).body.error).toBe(
      'validation_error',
    );
    expect((await tool(agent, 'svc_check_stock', { sku: 'NOPE' })).body.error).toBe('not_found');
    expect((await tool(stranger, 'svc_check_stock', { item_id: items['POT-1']?.id })).body.error).toBe(
      'not_found',
    );
    expect((await tool(stranger, 'svc_check_stock', { sku: 'POT-1' })).body.error).toBe('not_found');
  });
});

describe('svc_search', () => {
  const hits = async (query: string, extra: Record<string, unknown> = {}) =>
    (await tool(agent, 'svc_search', { query, ...extra })).body.hits as {
      type: string;
      title: string;
      score: number;
    }[];

  it('ranks whole matches first, then prefixes, word prefixes and anything containing the query', async () => {
    const tea = await hits('tea');
    expect(tea.map((h) => h.title).sort()).toEqual(
      ['Black Tea 100g', 'Green Tea 100g', 'Teagan Moss', 'Teapot', 'Tom Potter'].sort(),
    );
    expect(tea.map((h) => h.score)).toEqual([...tea.map((h) => h.score)].sort((a, b) => b - a));
    expect((await hits('teapot'))[0]).toMatchObject({ type: 'inventory_item', title: 'Teapot', score: 100 });
    expect((await hits('TEA-GRN'))[0]).toMatchObject({
      type: 'inventory_item',
      title: 'Green Tea 100g',
      score: 101,
    });
    expect(await hits('traders')).toEqual([
      expect.objectContaining({ type: 'contact', title: 'Tom Potter', score: 55 }),
    ]);
    // 'otte' is inside both his name (30) and his email (31): the better field counts.
    expect(await hits('otte')).toEqual([expect.objectContaining({ title: 'Tom Potter', score: 31 })]);
    expect((await hits('tom@potter.example'))[0]).toMatchObject({
      type: 'contact',
      title: 'Tom Potter',
      score: 101,
    });
    expect((await hits('ORD-000001'))[0]).toMatchObject({ type: 'order', title: 'ORD-000001', score: 101 });
  });

  it('finds phone numbers by their digits in any format', async () => {
    expect((await hits('086 123 4567')).map((h) => h.title)).toEqual([]);
    expect((await hits('86 123 4567')).map((h) => h.title)).toEqual(['Teagan Moss']);
    expect((await hits('+353 86 123 4567'))[0]).toMatchObject({ title: 'Teagan Moss', score: 101 });
  });

  it('limits by type and count, takes wildcards literally, and sees only the caller’s organization', async () => {
    expect((await hits('tea', { types: ['contact'] })).every((h) => h.type === 'contact')).toBe(true);
    expect(await hits('tea', { limit: 2 })).toHaveLength(2);
    expect(await hits('%_')).toEqual([]);
    expect((await tool(stranger, 'svc_search', { query: 'tea' })).body.hits).toEqual([]);
    expect((await tool(agent, 'svc_search', { query: 'x' })).body.error).toBe('validation_error');
  });
});

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, SERVICE } from '../../src/platform/db/database.ts';
import { onPostgres } from '../helpers/db.ts';
import { orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// The search design of migrations/0037: candidates from each table's trigram index through the
// search views, records read under RLS. What people type must still find what they expect, the
// ranking must hold when a fragment is in more rows than the candidates taken, and no path may
// show another tenant's rows.

let svc: TestService;
let owner: Session;
let agent: Client;
let ownerPrincipal: Principal;

async function insert(org: string, table: string, rows: Record<string, unknown>[]) {
  const cols = Object.keys(rows[0] as object);
  await svc.services.db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      `insert into public.${table} (organization_id, ${cols.join(', ')})
       select $1, ${cols.map((c) => `r.${c}`).join(', ')}
         from jsonb_to_recordset($2::jsonb) as r(${cols.map((c) => `${c} text`).join(', ')})`,
      [org, JSON.stringify(rows)],
    ),
  );
}

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Findable Ltd');
  await setPlan(svc, owner, 'scale');
  const stranger = await signUp(svc, 'Hidden Ltd');
  const org = orgOf(owner);
  await insert(org, 'contacts', [
    {
      first_name: 'Marianne',
      last_name: 'Okafor',
      email: 'm.okafor@north.example',
      phone: '+442079460123',
      company: 'Northwind',
    },
    {
      first_name: 'Joanna',
      last_name: 'Smith',
      email: 'jo@smith.example',
      phone: '+15550001111',
      company: null,
    },
  ]);
  await insert(org, 'orders', [
    {
      customer_name: 'Marianne Okafor',
      customer_email: 'm.okafor@north.example',
      customer_phone: '+442079460123',
    },
  ]);
  await insert(org, 'inventory_items', [
    { name: 'Blue Ceramic Mug', sku: 'MUG-BLU-12' },
    { name: 'Widget', sku: 'W-0' },
  ]);
  // More items containing "widget" than app.search takes as candidates (200 a table).
  await insert(
    org,
    'inventory_items',
    Array.from({ length: 260 }, (_, i) => ({ name: `Widget ${i + 1}`, sku: `W-${i + 1}` })),
  );
  await insert(orgOf(stranger), 'contacts', [
    {
      first_name: 'Marianne',
      last_name: 'Theirs',
      email: 'm.okafor@theirs.example',
      phone: '+442079460999',
      company: 'Northwind',
    },
  ]);
  await insert(orgOf(stranger), 'inventory_items', [{ name: 'Widget', sku: 'MUG-BLU-99' }]);
  await svc.services.db.query('analyze');
  agent = await mcpClient(svc, (await agentToken(svc, owner, ['read'])).token);
  const claims = await svc.services.tokens.verify(owner.access_token);
  ownerPrincipal = { kind: 'user', userId: owner.user.id, claims };
});
afterAll(async () => {
  await agent?.close();
  await svc?.stop();
});

type Hit = { type: string; title: string; subtitle: string | null; score: number };
const hits = async (query: string, extra: Record<string, unknown> = {}) =>
  (await tool(agent, 'svc_search', { query, ...extra })).body.hits as Hit[];
const titles = async (query: string) => (await hits(query)).map((h) => `${h.type}:${h.title}`);

describe('svc_search on the trigram indexes', () => {
  it('finds a fragment in the middle of a name, an email, an order number or a SKU', async () => {
    // Her order carries her name and email too.
    expect((await titles('rianne')).sort()).toEqual(['contact:Marianne Okafor', 'order:ORD-000001']);
    expect((await titles('kafor@nor')).sort()).toEqual(['contact:Marianne Okafor', 'order:ORD-000001']);
    expect(await titles('D-00000')).toEqual(['order:ORD-000001']);
    expect(await titles('blu-1')).toEqual(['inventory_item:Blue Ceramic Mug']);
    expect(await titles('CERAMIC')).toEqual(['inventory_item:Blue Ceramic Mug']);
  });

  it('finds phone numbers by a run of their digits, contacts and orders alike', async () => {
    expect((await titles('20 7946 0123')).sort()).toEqual(['contact:Marianne Okafor', 'order:ORD-000001']);
    // Equal scores: the newer record (the order) first.
    expect(await hits('+44 20 7946 0123')).toEqual([
      expect.objectContaining({ type: 'order', title: 'ORD-000001', score: 101 }),
      expect.objectContaining({ type: 'contact', title: 'Marianne Okafor', score: 101 }),
    ]);
  });

  it('ranks the whole name first even among more matches than it scores', async () => {
    const widgets = await hits('widget', { types: ['inventory_item'], limit: 5 });
    expect(widgets[0]).toMatchObject({ title: 'Widget', score: 100 });
    expect(widgets.slice(1).map((h) => h.score)).toEqual([70, 70, 70, 70]);
    expect((await hits('w-0'))[0]).toMatchObject({ title: 'Widget', score: 101 });
  });

  it("never shows another tenant's rows, and takes a backslash literally", async () => {
    expect(await titles('theirs')).toEqual([]);
    expect(await titles('mug-blu-99')).toEqual([]);
    expect(await titles('2079460999')).toEqual([]);
    expect(await titles('a\\%b')).toEqual([]);
    expect(await titles('\\\\')).toEqual([]);
  });

  it('is planned from the trigram index for the tenant (PostgreSQL)', async () => {
    // Not a timing: whether the planner may use the index at all. A filter made costly tips it
    // towards the index on tables this small (as in text-search.test.ts); the 262 items are enough.
    const plan = await svc.services.db.asPrincipal(ownerPrincipal, async (tx) => {
      await tx.query('set local enable_seqscan = off');
      await tx.query('set local cpu_operator_cost = 10');
      const rows = await tx.query<{ 'QUERY PLAN': string }>(
        `explain select * from app.search('eramic', '{inventory_item}', 10)`,
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    // PGlite's planner keeps the organization's btree here whatever the costs (text-search.test.ts).
    if (onPostgres()) expect(plan).toContain('inventory_items_search_trgm_idx');
    // Inlined into the caller's query: planned with the query's values, not as an opaque function.
    expect(plan).not.toMatch(/Function Scan/);
  });
});

describe('the list tools and /rest/v1 ask the same search views', () => {
  const names = async (args: Record<string, unknown>) =>
    ((await tool(agent, 'svc_list_contacts', args)).body.contacts as { first_name: string }[]).map(
      (c) => c.first_name,
    );

  it('svc_list_contacts finds by the middle of a name, an email, phone digits; never elsewhere', async () => {
    expect(await names({ name: 'rianne oka' })).toEqual(['Marianne']);
    expect(await names({ name: 'northw' })).toEqual(['Marianne']);
    expect(await names({ email: 'OKAFOR@' })).toEqual(['Marianne']);
    expect(await names({ phone: '7946 0123' })).toEqual(['Marianne']);
    expect(await names({ name: 'theirs' })).toEqual([]);
    expect(await names({ name: 'rianne', phone: '0001111' })).toEqual([]);
  });

  it('svc_list_inventory finds an item by the middle of its name', async () => {
    const items = (await tool(agent, 'svc_list_inventory', { name: 'eramic' })).body.items as {
      sku: string;
    }[];
    expect(items.map((i) => i.sku)).toEqual(['MUG-BLU-12']);
  });

  it('/rest/v1 serves the dashboard’s contact search (phone included) and order and item filters', async () => {
    const rest = new PostgrestClient(`${svc.url}/rest/v1`, {
      headers: { apikey: svc.anonKey, Authorization: `Bearer ${owner.access_token}` },
    });
    const term = '7946012';
    const contacts = await rest
      .from('contacts')
      .select('first_name')
      .or(
        ['first_name', 'last_name', 'email', 'phone', 'company'].map((c) => `${c}.ilike.*${term}*`).join(','),
      );
    expect(contacts.data).toEqual([{ first_name: 'Marianne' }]);
    const orders = await rest.from('orders').select('order_number').ilike('customer_name', '*ANNE OKA*');
    expect(orders.data).toEqual([{ order_number: 'ORD-000001' }]);
    const items = await rest.from('inventory_items').select('name').ilike('sku', '*blu*');
    expect(items.data).toEqual([{ name: 'Blue Ceramic Mug' }]);
    // A `like` is case-sensitive on the table, whatever the lower-cased search text matched.
    const exact = await rest.from('inventory_items').select('name').like('name', '*ceramic*');
    expect(exact.data).toEqual([]);
  });

  it('app.search_cached (0042, plans kept) answers what app.search answers, call after call', async () => {
    const queries = [
      'rianne',
      'kafor@nor',
      'D-00000',
      'blu-1',
      'CERAMIC',
      '20 7946 0123',
      '+44 20 7946 0123',
      '1111',
      'widget',
      '  Widget  ',
      'w-0',
      'W-0',
      'ORD-000001',
      'ord-000001',
      'jo@smith.example',
      'smith',
      'mar',
      'ma',
      'Mug',
      'theirs',
      'a\\%b',
      '\\\\',
      'zzzz',
    ];
    const kinds = [['contact', 'order', 'inventory_item'], ['inventory_item'], ['contact', 'order']];
    const answers = (fn: string, query: string, types: string[], limit: number) =>
      svc.services.db.asPrincipal(ownerPrincipal, (tx) =>
        tx.query(`select * from app.${fn}($1, $2::text[], $3)`, [query, types, limit]),
      );
    let found = 0;
    // Twice over, so the later calls run on the connection's cached plans.
    for (let round = 0; round < 2; round++) {
      for (const query of queries) {
        for (const types of kinds) {
          for (const limit of [10, 3]) {
            const expected = await answers('search', query, types, limit);
            expect(await answers('search_cached', query, types, limit), `${query} ${types} ${limit}`).toEqual(
              expected,
            );
            found += expected.length;
          }
        }
      }
    }
    expect(found).toBeGreaterThan(100);
  });
});

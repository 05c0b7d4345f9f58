import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../src/platform/db/database.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let stranger: Session;
const COMPANIES = ['Acme', 'Globex', 'Initech'];

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Readers Ltd');
  stranger = await signUp(svc, 'Strangers Ltd');
  await call(svc, 'POST', '/functions/v1/organization-plan', {
    token: svc.serviceRoleKey,
    body: { organization_id: orgOf(owner), plan: 'growth' },
  });
  // 120 contacts: c000…c119, companies in turn, every tenth without email.
  await svc.services.db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      `insert into contacts (organization_id, first_name, last_name, email, company, tags)
       select $1, 'c' || lpad(g::text, 3, '0'), 'Last', case when g % 10 = 0 then null else 'c' || g || '@ex.test' end,
              ($2::text[])[1 + g % 3], case when g % 2 = 0 then '{vip}'::text[] else '{}' end
         from generate_series(0, 119) g`,
      [orgOf(owner), COMPANIES],
    ),
  );
  await svc.services.db.asPrincipal(SERVICE, (tx) =>
    tx.query("insert into contacts (organization_id, first_name, company) values ($1, 'theirs', 'Acme')", [
      orgOf(stranger),
    ]),
  );
});
afterAll(() => svc?.stop());

const rest = (token?: string) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
  });

// biome-ignore lint/suspicious/noExplicitAny: the query builder's type is deep; tests chain it freely
type Q = any;

describe('reads with @supabase/postgrest-js', () => {
  it('selects columns with aliases and casts, filters, orders and limits', async () => {
    const { data, error, status } = await rest(owner.access_token)
      .from('contacts')
      .select('name:first_name,company,created_at::date')
      .eq('company', 'Globex')
      .order('first_name', { ascending: false })
      .limit(3);
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual([
      { name: 'c118', company: 'Globex', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\d$/) },
      { name: 'c115', company: 'Globex', created_at: expect.any(String) },
      { name: 'c112', company: 'Globex', created_at: expect.any(String) },
    ]);
  });

  it('supports every operator, negation and or=()', async () => {
    const names = async (build: (q: Q) => unknown) => {
      const { data, error } = (await build(
        rest(owner.access_token).from('contacts').select('first_name'),
      )) as {
        data: { first_name: string }[] | null;
        error: unknown;
      };
      expect(error).toBeNull();
      return (data ?? []).map((r) => r.first_name).sort();
    };
    expect(await names((q: Q) => q.eq('first_name', 'c005'))).toEqual(['c005']);
    expect((await names((q: Q) => q.neq('company', 'Acme').limit(100))).length).toBe(80);
    expect(await names((q: Q) => q.gt('first_name', 'c117'))).toEqual(['c118', 'c119']);
    expect(await names((q: Q) => q.gte('first_name', 'c118'))).toEqual(['c118', 'c119']);
    expect(await names((q: Q) => q.lt('first_name', 'c002'))).toEqual(['c000', 'c001']);
    expect(await names((q: Q) => q.lte('first_name', 'c001'))).toEqual(['c000', 'c001']);
    expect(await names((q: Q) => q.like('first_name', 'c11*'))).toEqual([
      'c110',
      'c111',
      'c112',
      'c113',
      'c114',
      'c115',
      'c116',
      'c117',
      'c118',
      'c119',
    ]);
    expect(await names((q: Q) => q.ilike('first_name', 'C00*').lt('first_name', 'c003'))).toEqual([
      'c000',
      'c001',
      'c002',
    ]);
    expect(await names((q: Q) => q.in('first_name', ['c001', 'c002', 'nobody']))).toEqual(['c001', 'c002']);
    expect(await names((q: Q) => q.is('email', null).lt('first_name', 'c030'))).toEqual([
      'c000',
      'c010',
      'c020',
    ]);
    expect(await names((q: Q) => q.not('email', 'is', null).lt('first_name', 'c003'))).toEqual([
      'c001',
      'c002',
    ]);
    expect(
      await names((q: Q) => q.or('first_name.eq.c007,and(first_name.gt.c117,company.eq.Globex)')),
    ).toEqual(['c007', 'c118']);
  });

  it('counts and pages: Content-Range, 206 for a partial page, 416 past the end', async () => {
    const page = await rest(owner.access_token)
      .from('contacts')
      .select('first_name', { count: 'exact' })
      .order('first_name')
      .range(10, 19);
    expect(page.status).toBe(206);
    expect(page.count).toBe(120);
    expect(page.data?.map((r) => r.first_name)).toEqual(Array.from({ length: 10 }, (_, i) => `c0${10 + i}`));
    const past = await rest(owner.access_token)
      .from('contacts')
      .select('*', { count: 'exact' })
      .range(500, 509);
    expect(past.status).toBe(416);
    expect(past.error?.code).toBe('PGRST103');
  });

  it('pages by Range header, 25 rows by default and never more than 100', async () => {
    const headers = { apikey: svc.anonKey, authorization: `Bearer ${owner.access_token}` };
    const byDefault = await fetch(`${svc.url}/rest/v1/contacts?select=id`, { headers });
    expect(((await byDefault.json()) as unknown[]).length).toBe(25);
    expect(byDefault.headers.get('content-range')).toBe('0-24/*');
    const ranged = await fetch(`${svc.url}/rest/v1/contacts?select=id&order=first_name`, {
      headers: { ...headers, range: '5-9', prefer: 'count=exact' },
    });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe('5-9/120');
    const capped = await fetch(`${svc.url}/rest/v1/contacts?select=id&limit=500`, {
      headers: { ...headers, prefer: 'count=exact' },
    });
    expect(((await capped.json()) as unknown[]).length).toBe(100);
    expect(capped.headers.get('content-range')).toBe('0-99/120');
    const head = await fetch(`${svc.url}/rest/v1/contacts?company=eq.Acme`, {
      method: 'HEAD',
      headers: { ...headers, prefer: 'count=exact' },
    });
    expect(head.status).toBe(206);
    expect(head.headers.get('content-range')).toBe('0-24/40');
  });

  it('single(): exactly one row as an object, else 406 PGRST116', async () => {
    const one = await rest(owner.access_token)
      .from('contacts')
      .select('first_name')
      .eq('first_name', 'c042')
      .single();
    expect(one.data).toEqual({ first_name: 'c042' });
    const none = await rest(owner.access_token)
      .from('contacts')
      .select('first_name')
      .eq('first_name', 'nobody')
      .single();
    expect(none.status).toBe(406);
    expect(none.error?.code).toBe('PGRST116');
  });
});

describe('isolation and refusals', () => {
  it('lists a person’s memberships in every organization, not only the current one', async () => {
    const person = await signUp(svc, 'First Home');
    const second = await call(svc, 'POST', '/functions/v1/organization-create', {
      token: person.access_token,
      body: { name: 'Second Home' },
    });
    expect(second.status).toBe(201);
    const { data, error } = await rest(person.access_token)
      .from('organization_members')
      .select('organization_id, role');
    expect(error).toBeNull();
    expect((data ?? []).map((m) => m.organization_id).sort()).toEqual(
      [orgOf(person), second.json.organization.id].sort(),
    );
  });

  it('shows another tenant nothing, even by id', async () => {
    const [theirs] = await svc.services.db.query<{ id: string }>(
      "select id from contacts where first_name = 'theirs'",
    );
    const { data } = await rest(owner.access_token)
      .from('contacts')
      .select('*')
      .eq('id', theirs?.id as string);
    expect(data).toEqual([]);
    const mine = await rest(stranger.access_token).from('contacts').select('first_name');
    expect(mine.data).toEqual([{ first_name: 'theirs' }]);
  });

  it('answers anonymous callers 401 and unknown names with clear errors', async () => {
    const anon = await rest().from('contacts').select('*');
    expect(anon.status).toBe(401);
    expect(anon.error?.code).toBe('42501');
    const table = await rest(owner.access_token).from('no_such_table').select('*');
    expect(table.status).toBe(404);
    const col = await rest(owner.access_token).from('contacts').select('nope');
    expect(col.status).toBe(400);
    expect(col.error?.code).toBe('42703');
    const hash = await rest(owner.access_token).from('agent_api_keys').select('key_hash');
    expect(hash.status).toBe(400);
    const users = await rest(owner.access_token).from('users').select('*');
    expect(users.status).toBe(404);
    const badOp = await fetch(`${svc.url}/rest/v1/contacts?first_name=regex.x`, {
      headers: { apikey: svc.anonKey, authorization: `Bearer ${owner.access_token}` },
    });
    expect(badOp.status).toBe(400);
    expect(((await badOp.json()) as { code: string }).code).toBe('PGRST100');
    const badValue = await rest(owner.access_token).from('contacts').select('*').eq('id', 'not-a-uuid');
    expect(badValue.status).toBe(400);
    expect(badValue.error?.code).toBe('22P02');
    expect(JSON.stringify(badValue.error)).not.toMatch(/select |from public/i);
  });

  it('requires the apikey header', async () => {
    const r = await fetch(`${svc.url}/rest/v1/contacts`, {
      headers: { authorization: `Bearer ${owner.access_token}` },
    });
    expect(r.status).toBe(401);
  });
});

describe('embedding related resources', () => {
  it('embeds many-to-one as an object and one-to-many as an array, through composite keys', async () => {
    const db = rest(owner.access_token);
    const { data: contact } = await db.from('contacts').select('id').eq('first_name', 'c001').single();
    const { data: order } = await db
      .from('orders')
      .insert({ contact_id: (contact as { id: string }).id, notes: 'embed me' })
      .select('id')
      .single();
    const orderId = (order as { id: string }).id;
    await db.from('order_items').insert([
      { order_id: orderId, name: 'Widget', quantity: 2, unit_price: 3.5 },
      { order_id: orderId, name: 'Gadget', quantity: 1, unit_price: 10 },
    ]);
    const { data, error } = await db
      .from('orders')
      .select('order_number,total,order_items(name,quantity),customer:contacts(first_name,email)')
      .eq('id', orderId)
      .single();
    expect(error).toBeNull();
    expect(data).toEqual({
      order_number: expect.stringMatching(/^ORD-\d{6}$/),
      total: 17,
      order_items: expect.arrayContaining([
        { name: 'Widget', quantity: 2 },
        { name: 'Gadget', quantity: 1 },
      ]),
      customer: { first_name: 'c001', email: 'c1@ex.test' },
    });
    // Nested: items with their order's contact.
    const nested = await db
      .from('order_items')
      .select('name,orders(notes,contacts(first_name))')
      .eq('order_id', orderId)
      .order('name');
    expect(nested.data?.[0]).toEqual({
      name: 'Gadget',
      orders: { notes: 'embed me', contacts: { first_name: 'c001' } },
    });
  });

  it('filters, orders and limits an embedded resource without filtering its parent', async () => {
    const db = rest(owner.access_token);
    const { data: order } = await db.from('orders').insert({ notes: 'filtered embed' }).select('id').single();
    const orderId = (order as { id: string }).id;
    await db.from('order_items').insert([
      { order_id: orderId, name: 'a', quantity: 1, unit_price: 1 },
      { order_id: orderId, name: 'b', quantity: 5, unit_price: 1 },
      { order_id: orderId, name: 'c', quantity: 9, unit_price: 1 },
    ]);
    const res = await fetch(
      `${svc.url}/rest/v1/orders?select=notes,order_items(name,quantity)&id=eq.${orderId}&order_items.quantity=gt.1&order_items.order=quantity.desc&order_items.limit=1`,
      { headers: { apikey: svc.anonKey, authorization: `Bearer ${owner.access_token}` } },
    );
    expect(await res.json()).toEqual([
      { notes: 'filtered embed', order_items: [{ name: 'c', quantity: 9 }] },
    ]);
    const none = await db
      .from('orders')
      .select('notes,order_items(name)')
      .eq('id', orderId)
      .eq('order_items.name', 'zzz');
    expect(none.data).toEqual([{ notes: 'filtered embed', order_items: [] }]);
  });

  it('refuses a relation that is not related, with a clear error', async () => {
    const r = await rest(owner.access_token).from('contacts').select('first_name,plans(name)');
    expect(r.status).toBe(400);
    expect(r.error?.code).toBe('PGRST200');
  });
});

describe('JSON paths', () => {
  it('selects into and filters on JSON columns', async () => {
    const db = rest(owner.access_token);
    await db.from('contacts').insert([
      { first_name: 'json1', address: { city: 'Paris', zip: '75001', lines: ['1 Rue'] } },
      { first_name: 'json2', address: { city: 'Lyon', zip: '69001' } },
    ]);
    const { data, error } = await db
      .from('contacts')
      .select('first_name,address->>city,postcode:address->>zip,first_line:address->lines->>0')
      .like('first_name', 'json*')
      .order('first_name');
    expect(error).toBeNull();
    expect(data).toEqual([
      { first_name: 'json1', city: 'Paris', postcode: '75001', first_line: '1 Rue' },
      { first_name: 'json2', city: 'Lyon', postcode: '69001', first_line: null },
    ]);
    const lyon = await db.from('contacts').select('first_name').eq('address->>city', 'Lyon');
    expect(lyon.data).toEqual([{ first_name: 'json2' }]);
    const bad = await db.from('contacts').select('address->>city;drop');
    expect(bad.status).toBe(400);
  });
});

describe('the REST description', () => {
  it('serves an OpenAPI document of the exposed tables at /rest/v1/', async () => {
    const r = await fetch(`${svc.url}/rest/v1/`, { headers: { apikey: svc.anonKey } });
    expect(r.status).toBe(200);
    const doc = (await r.json()) as {
      swagger: string;
      paths: Record<string, unknown>;
      definitions: Record<string, { properties: Record<string, unknown> }>;
    };
    expect(doc.swagger).toBe('2.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/contacts', '/orders', '/order_items', '/agent_api_keys']),
    );
    expect(Object.keys(doc.paths)).not.toContain('/users');
    expect(doc.definitions.contacts?.properties.first_name).toEqual({ type: 'string', format: 'text' });
    expect(doc.definitions.agent_api_keys?.properties).not.toHaveProperty('key_hash');
    // The page size is said where a client looks, so a 100-row page is not taken for the end.
    const get = (doc.paths['/contacts'] as { get: { parameters: { name: string; maximum?: number }[] } }).get;
    expect(get.parameters.find((p) => p.name === 'limit')).toMatchObject({ maximum: 100, default: 25 });
    expect(doc.paths).toHaveProperty(['/rpc/{name}', 'post', 'responses', '404']);
    expect((await fetch(`${svc.url}/rest/v1/`)).status).toBe(401);
  });
});

describe('refusals found in review', () => {
  const get = (qs: string) =>
    fetch(`${svc.url}/rest/v1/contacts?${qs}`, {
      headers: { apikey: svc.anonKey, authorization: `Bearer ${owner.access_token}` },
    });

  it('offers only known casts: SQL in a cast never reaches the database', async () => {
    for (const qs of [
      'select=id::text as x from contacts where false union all select current_user',
      'select=id::nosuchtype',
      'select=first_name::text::int',
      'select=a:b:first_name',
    ]) {
      const r = await get(qs);
      expect(r.status, qs).toBe(400);
      expect(((await r.json()) as { code: string }).code).toBe('PGRST100');
    }
  });

  it('filters array columns with in, and orders by the column even when an alias shares its name', async () => {
    const vip = await get('select=first_name&tags=in.(%22%7Bvip%7D%22)&limit=100');
    const body = await vip.text();
    expect(vip.status, body).toBe(200);
    expect((JSON.parse(body) as unknown[]).length).toBe(60);
    // `first_name` is also an output alias here; the order still follows the column.
    const r = await get(
      'select=first_name:company,n:first_name&order=first_name.desc&limit=1&first_name=lt.c118',
    );
    expect(await r.json()).toEqual([{ first_name: 'Acme', n: 'c117' }]);
  });
});

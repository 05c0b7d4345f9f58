import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let other: Session;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Writers Ltd');
  other = await signUp(svc, 'Others Ltd');
});
afterAll(() => svc?.stop());

const rest = (token: string) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${token}` },
  });

async function agentToken(session: Session, scopes: string[]) {
  const key = await call(svc, 'POST', '/functions/v1/agent-api-key-create', {
    token: session.access_token,
    body: { name: `agent ${scopes.join('+')}`, scopes },
  });
  return (await call(svc, 'POST', '/functions/v1/agent-auth', { body: { api_key: key.json.api_key } })).json
    .access_token as string;
}

describe('writes with @supabase/postgrest-js', () => {
  it('inserts a row in the caller’s organization and ignores what the database computes', async () => {
    const { data, error, status } = await rest(owner.access_token)
      .from('orders')
      .insert({ notes: 'first', status: 'shipped', order_number: 'HACK-1', total: 999, tax_total: 1.5 })
      .select()
      .single();
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toMatchObject({
      organization_id: orgOf(owner),
      notes: 'first',
      status: 'pending',
      order_number: 'ORD-000001',
      total: 1.5,
    });
  });

  it('answers return=headers-only with a Location to read the row again', async () => {
    const headers = {
      apikey: svc.anonKey,
      authorization: `Bearer ${owner.access_token}`,
      'content-type': 'application/json',
    };
    const res = await fetch(`${svc.url}/rest/v1/contacts`, {
      method: 'POST',
      headers: { ...headers, prefer: 'return=headers-only' },
      body: JSON.stringify({ first_name: 'located' }),
    });
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('');
    const where = res.headers.get('location') as string;
    expect(where).toMatch(/^\/contacts\?organization_id=eq\.[0-9a-f-]+&id=eq\.[0-9a-f-]+$/);
    const again = await fetch(`${svc.url}/rest/v1${where}&select=first_name`, { headers });
    expect(await again.json()).toEqual([{ first_name: 'located' }]);
  });

  it('fills omitted columns with their defaults when asked (missing=default), else with null', async () => {
    const headers = {
      apikey: svc.anonKey,
      authorization: `Bearer ${owner.access_token}`,
      'content-type': 'application/json',
    };
    const rows = [{ name: 'with stock', quantity_on_hand: 5, status: 'draft' }, { name: 'without' }];
    const post = (prefer: string) =>
      fetch(
        `${svc.url}/rest/v1/inventory_items?columns=name,quantity_on_hand,status&select=name,quantity_on_hand,status`,
        {
          method: 'POST',
          headers: { ...headers, prefer },
          body: JSON.stringify(rows.map((r, i) => ({ ...r, name: `${r.name} ${prefer} ${i}` }))),
        },
      );
    const withDefaults = await post('return=representation,missing=default');
    expect(withDefaults.status).toBe(201);
    const made = (await withDefaults.json()) as { name: string; quantity_on_hand: number; status: string }[];
    expect(made.find((r) => r.name.startsWith('without'))).toMatchObject({
      quantity_on_hand: 0,
      status: 'active',
    });
    expect(made.find((r) => r.name.startsWith('with stock'))).toMatchObject({
      quantity_on_hand: 5,
      status: 'draft',
    });
    // Without the preference an omitted NOT NULL column is null, and the whole insert fails.
    const withoutDefaults = await post('return=representation');
    expect(withoutDefaults.status).toBe(400);
  });

  it('undoes a single-object write that touched more than one row', async () => {
    await rest(owner.access_token)
      .from('contacts')
      .insert([
        { first_name: 'twin', company: 'T1' },
        { first_name: 'twin', company: 'T2' },
      ]);
    const both = await rest(owner.access_token)
      .from('contacts')
      .update({ company: 'changed' })
      .eq('first_name', 'twin')
      .select()
      .single();
    expect(both.status).toBe(406);
    const { data } = await rest(owner.access_token)
      .from('contacts')
      .select('company')
      .eq('first_name', 'twin')
      .order('company');
    expect(data).toEqual([{ company: 'T1' }, { company: 'T2' }]);
  });

  it('inserts an array all or nothing', async () => {
    const bad = await rest(owner.access_token)
      .from('contacts')
      .insert([{ first_name: 'ok' }, { first_name: 'bad', phone: 'not a phone' }]);
    expect(bad.status).toBe(400);
    expect(bad.error?.code).toBe('23514');
    const { count } = await rest(owner.access_token)
      .from('contacts')
      .select('*', { count: 'exact', head: true })
      .eq('first_name', 'ok');
    expect(count).toBe(0);
    const good = await rest(owner.access_token)
      .from('contacts')
      .insert([{ first_name: 'a1' }, { first_name: 'a2' }])
      .select('first_name');
    expect(good.data?.map((r) => r.first_name).sort()).toEqual(['a1', 'a2']);
  });

  it('refuses an array whose objects carry different keys unless ?columns lists them (PGRST102)', async () => {
    const rows = [{ first_name: 'keys-a' }, { first_name: 'keys-b', company: 'Would be lost' }];
    const r = await call(svc, 'POST', '/rest/v1/contacts', { token: owner.access_token, body: rows });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      code: 'PGRST102',
      message: expect.stringMatching(/^All object keys must match/),
    });
    const listed = await call(svc, 'POST', '/rest/v1/contacts?columns=first_name,company&select=company', {
      token: owner.access_token,
      body: rows,
      headers: { prefer: 'return=representation' },
    });
    expect(listed.status).toBe(201);
    expect(listed.json.map((c: { company: string | null }) => c.company).sort()).toEqual([
      'Would be lost',
      null,
    ]);
  });

  it('upserts with merge-duplicates and ignore-duplicates on a unique key', async () => {
    const row = { source: 'shopify', external_id: 'cust-9', first_name: 'Ann' };
    const onConflict = 'organization_id,source,external_id';
    await rest(owner.access_token).from('contacts').upsert(row, { onConflict });
    const merged = await rest(owner.access_token)
      .from('contacts')
      .upsert({ ...row, first_name: 'Anne' }, { onConflict })
      .select('first_name');
    expect(merged.data).toEqual([{ first_name: 'Anne' }]);
    const ignored = await rest(owner.access_token)
      .from('contacts')
      .upsert({ ...row, first_name: 'Annie' }, { onConflict, ignoreDuplicates: true })
      .select('first_name');
    expect(ignored.data).toEqual([]);
    const { data } = await rest(owner.access_token)
      .from('contacts')
      .select('first_name')
      .eq('external_id', 'cust-9');
    expect(data).toEqual([{ first_name: 'Anne' }]);
  });

  it('updates and deletes by filter, and refuses to do either without one', async () => {
    const { data: created } = await rest(owner.access_token)
      .from('contacts')
      .insert({ first_name: 'temp' })
      .select('id')
      .single();
    const id = (created as { id: string }).id;
    const upd = await rest(owner.access_token)
      .from('contacts')
      .update({ company: 'Initech' })
      .eq('id', id)
      .select('company');
    expect(upd.status).toBe(200);
    expect(upd.data).toEqual([{ company: 'Initech' }]);
    const minimal = await rest(owner.access_token)
      .from('contacts')
      .update({ company: 'Globex' })
      .eq('id', id);
    expect(minimal.status).toBe(204);
    const unfiltered = await fetch(`${svc.url}/rest/v1/contacts`, {
      method: 'PATCH',
      headers: {
        apikey: svc.anonKey,
        authorization: `Bearer ${owner.access_token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ company: 'Everyone' }),
    });
    expect(unfiltered.status).toBe(400);
    const del = await rest(owner.access_token).from('contacts').delete().eq('id', id);
    expect(del.status).toBe(204);
    const gone = await rest(owner.access_token).from('contacts').select('id').eq('id', id);
    expect(gone.data).toEqual([]);
  });

  it('refuses a delete without a filter (400) and deletes nothing', async () => {
    await rest(owner.access_token)
      .from('contacts')
      .insert([{ first_name: 'keep 1' }, { first_name: 'keep 2' }]);
    const count = async () =>
      (await rest(owner.access_token).from('contacts').select('*', { count: 'exact', head: true })).count;
    const before = await count();
    expect(before).toBeGreaterThanOrEqual(2);
    const all = await rest(owner.access_token).from('contacts').delete().select('id');
    expect(all.status).toBe(400);
    // Supabase's answer (pg-safeupdate): 21000 "DELETE requires a WHERE clause".
    expect(all.error?.code).toBe('21000');
    expect(all.error?.message).toMatch(/^DELETE requires a WHERE clause/);
    expect(all.data).toBeNull();
    expect(await count()).toBe(before);
  });

  it('answers a duplicate with 409 and a crossed plan ceiling with 403, writing nothing', async () => {
    await rest(owner.access_token).from('contacts').insert({ first_name: 'dup', email: 'dup@ex.test' });
    const dup = await rest(owner.access_token)
      .from('contacts')
      .insert({ first_name: 'dup2', email: 'DUP@ex.test' });
    expect(dup.status).toBe(409);
    expect(dup.error?.code).toBe('23505');
    const many = Array.from({ length: 60 }, (_, i) => ({ first_name: `bulk ${i}` }));
    const over = await rest(owner.access_token).from('contacts').insert(many);
    expect(over.status).toBe(403);
    expect(over.error?.code).toBe('plan_limit_exceeded');
    const { count } = await rest(owner.access_token)
      .from('contacts')
      .select('*', { count: 'exact', head: true })
      .like('first_name', 'bulk*');
    expect(count).toBe(0);
  });

  it('answers a reference to a missing row with 409 (23503)', async () => {
    const r = await rest(owner.access_token)
      .from('order_items')
      .insert({ order_id: '00000000-0000-4000-8000-000000000000', name: 'orphan', quantity: 1 });
    expect(r.status).toBe(409);
    expect(r.error?.code).toBe('23503');
  });

  it('changes and deletes nothing of another tenant, even by id', async () => {
    const { data } = await rest(other.access_token)
      .from('contacts')
      .insert({ first_name: 'not yours' })
      .select('id')
      .single();
    const id = (data as { id: string }).id;
    const upd = await rest(owner.access_token)
      .from('contacts')
      .update({ first_name: 'mine now' })
      .eq('id', id)
      .select();
    expect(upd.data).toEqual([]);
    const del = await rest(owner.access_token).from('contacts').delete().eq('id', id).select();
    expect(del.data).toEqual([]);
    const still = await rest(other.access_token).from('contacts').select('first_name').eq('id', id);
    expect(still.data).toEqual([{ first_name: 'not yours' }]);
  });
});

describe('agent scopes and key revocation', () => {
  it('read may not write, write may not delete, admin may', async () => {
    const org = await signUp(svc, 'Scoped Ltd');
    await call(svc, 'POST', '/functions/v1/organization-plan', {
      token: svc.serviceRoleKey,
      body: { organization_id: orgOf(org), plan: 'growth' },
    });
    const reader = await agentToken(org, ['read']);
    const writer = await agentToken(org, ['write']);
    const admin = await agentToken(org, ['admin']);
    const refused = await rest(reader).from('contacts').insert({ first_name: 'x' });
    expect(refused.status).toBe(403);
    expect(refused.error?.code).toBe('insufficient_scope');
    const { data } = await rest(writer)
      .from('contacts')
      .insert({ first_name: 'by writer' })
      .select('id')
      .single();
    const id = (data as { id: string }).id;
    expect((await rest(writer).from('contacts').delete().eq('id', id)).status).toBe(403);
    expect((await rest(reader).from('contacts').update({ first_name: 'y' }).eq('id', id)).status).toBe(403);
    expect((await rest(admin).from('contacts').delete().eq('id', id).select('id')).data).toEqual([{ id }]);
  });

  it('owners revoke a key with is_active = false, for good', async () => {
    const org = await signUp(svc, 'Revoking Ltd');
    const key = await call(svc, 'POST', '/functions/v1/agent-api-key-create', {
      token: org.access_token,
      body: { name: 'to revoke', scopes: ['read'] },
    });
    const { data: keys } = await rest(org.access_token).from('agent_api_keys').select('id,name,is_active');
    expect(keys).toEqual([{ id: expect.any(String), name: 'to revoke', is_active: true }]);
    const id = String(keys?.[0]?.id);
    const revoked = await rest(org.access_token)
      .from('agent_api_keys')
      .update({ is_active: false })
      .eq('id', id)
      .select('is_active');
    expect(revoked.data).toEqual([{ is_active: false }]);
    const ex = await call(svc, 'POST', '/functions/v1/agent-auth', { body: { api_key: key.json.api_key } });
    expect(ex.json.error).toBe('api_key_revoked');
    const revive = await rest(org.access_token)
      .from('agent_api_keys')
      .update({ is_active: true })
      .eq('id', id);
    expect(revive.status).toBe(409);
    const widen = await rest(org.access_token)
      .from('agent_api_keys')
      .update({ scopes: ['admin'] })
      .eq('id', id);
    expect(widen.status).toBe(403);
  });
});

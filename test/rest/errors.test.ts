import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// What protects: a database error on /rest/v1 names the column, what was wrong with its value and
// a hint, keeps PostgreSQL's SQLSTATE as `code` and PostgREST's status, never carries the
// statement's text or values of rows the caller did not send; and PGlite answers like PostgreSQL.

let svc: TestService;
let owner: Session;
let other: Session;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Errors Ltd');
  other = await signUp(svc, 'Other Errors Ltd');
});
afterAll(() => svc?.stop());

const rest = (session: Session = owner) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${session.access_token}` },
  });

/** No statement text, no stack: what a body must never carry. */
const noSql = (error: unknown) => {
  const text = JSON.stringify(error);
  expect(text).not.toMatch(/\b(select|insert into|update public|json_populate|returning)\b/i);
  expect(text).not.toMatch(/at .*\.ts:\d+/);
};

describe('values the database cannot read', () => {
  it('names the column and the value of a malformed uuid filter, with a hint', async () => {
    const { error, status } = await rest().from('contacts').select().eq('id', 'not-a-uuid');
    expect(status).toBe(400);
    expect(error).toMatchObject({
      code: '22P02',
      message: 'Column "id": invalid input syntax for type uuid: "not-a-uuid"',
      details: { column: 'id', issues: [{ path: 'id' }] },
    });
    expect(error?.hint).toMatch(/UUID/);
    noSql(error);
  });

  it('answers a boolean filter it cannot read with 400 22P02 on every engine (PGlite used to 500)', async () => {
    const { error, status } = await rest().from('agent_api_keys').select().eq('is_active', 'maybe');
    expect(status).toBe(400);
    expect(error).toMatchObject({
      code: '22P02',
      message: 'Column "is_active": invalid input syntax for type boolean: "maybe"',
      details: { column: 'is_active' },
      hint: 'Send true or false',
    });
    const list = await rest().from('agent_api_keys').select().in('is_active', ['true', 'maybe']);
    expect(list.status).toBe(400);
    expect(list.error).toMatchObject({ code: '22P02', details: { column: 'is_active' } });
  });

  it('still reads booleans PostgreSQL accepts as text', async () => {
    for (const v of ['true', 'false', 'yes', 'off']) {
      const { error, status } = await rest().from('agent_api_keys').select('id').eq('is_active', v);
      expect(error).toBeNull();
      expect(status).toBe(200);
    }
  });

  it('names the column of a timestamp it cannot read (22007)', async () => {
    const { error, status } = await rest().from('contacts').select().gt('created_at', 'yesterday-ish');
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: '22007', details: { column: 'created_at' } });
    expect(error?.message).toContain('"yesterday-ish"');
    expect(error?.hint).toMatch(/ISO 8601/);
  });

  it('names the column of a number out of range in an inserted row (22003)', async () => {
    const { error, status } = await rest()
      .from('inventory_items')
      .insert({ name: 'too many', quantity_on_hand: 99999999999 });
    expect(status).toBe(400);
    expect(error).toMatchObject({
      code: '22003',
      message: 'Column "quantity_on_hand": value "99999999999" is out of range for type integer',
      details: { column: 'quantity_on_hand' },
    });
    expect(error?.hint).toMatch(/number/);
    noSql(error);
  });
});

describe('rules a row breaks', () => {
  it('names the NOT NULL column a row of a batch left empty (23502)', async () => {
    const { error, status } = await rest()
      .from('warehouses')
      .insert([
        { name: 'North', is_default: false },
        { name: null, is_default: false },
      ]);
    expect(status).toBe(400);
    expect(error).toMatchObject({
      code: '23502',
      message: 'Enter the name',
      details: { issues: [{ path: 'name' }] },
    });
    expect(error?.hint).toContain('"name"');
    // PostgreSQL's detail ("Failing row contains (…)") could show columns the caller may not read.
    expect(JSON.stringify(error)).not.toContain('Failing row');
    noSql(error);
  });

  it('names the column and the rule of a CHECK it breaks (23514)', async () => {
    const { error, status } = await rest().from('contacts').insert({ email: 'not an email' });
    expect(status).toBe(400);
    expect(error).toMatchObject({
      code: '23514',
      details: { column: 'email', constraint: 'contacts_email_check', issues: [{ path: 'email' }] },
    });
    // A sentence for people; the rule itself is left to the hint, for developers.
    expect(error?.message).toBe('Enter an email address like name@example.com');
    expect(error?.hint).toMatch(/^The rule: CHECK/);
  });

  it('names the columns of a unique key taken (23505), without echoing values', async () => {
    const email = 'taken@example.test';
    expect((await rest().from('contacts').insert({ email })).error).toBeNull();
    const { error, status } = await rest().from('contacts').insert({ email });
    expect(status).toBe(409);
    expect(error).toMatchObject({
      code: '23505',
      details: { constraint: 'contacts_email_key', columns: ['organization_id', 'email'] },
    });
    expect(error?.message).toBe('Another contact already has this email address');
    expect(error).toMatchObject({ details: { column: 'email' } });
    expect(error?.hint).toContain('on_conflict=organization_id,email');
    // The key's values (the organization's id among them) are not repeated back.
    expect(JSON.stringify(error)).not.toContain(email);
    expect(JSON.stringify(error)).not.toContain(orgOf(owner));
  });
});

describe('upsert targets', () => {
  it('says which unique keys there are when on_conflict names none of them (42P10)', async () => {
    const { error, status } = await rest()
      .from('contacts')
      .upsert({ email: 'upsert@example.test', first_name: 'U' }, { onConflict: 'email' });
    expect(status).toBe(400);
    expect(error?.code).toBe('42P10');
    expect(error?.message).toContain('No unique key of "contacts" is (email)');
    expect(error?.message).toContain('(organization_id, email)');
    expect(error?.hint).toBe('Use on_conflict=organization_id,email');
    const keys = (error as unknown as { details: { unique_keys: { columns: string[] }[] } }).details
      .unique_keys;
    expect(keys.map((k) => k.columns)).toContainEqual(['organization_id', 'email']);
    expect(keys.map((k) => k.columns)).toContainEqual(['organization_id', 'id']);
  });

  it('upserts with the whole key named', async () => {
    const c = rest().from('contacts');
    const row = { organization_id: orgOf(owner), email: 'upsert2@example.test', first_name: 'A' };
    expect((await c.upsert(row, { onConflict: 'organization_id,email' })).error).toBeNull();
    const { data, error } = await rest()
      .from('contacts')
      .upsert({ ...row, first_name: 'B' }, { onConflict: 'organization_id,email' })
      .select('first_name');
    expect(error).toBeNull();
    expect(data).toEqual([{ first_name: 'B' }]);
  });

  it('names the column and lists the table’s columns for an unknown column (42703)', async () => {
    const { error, status } = await rest().from('contacts').select().eq('emial', 'x');
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: '42703', details: { issues: [{ path: 'emial' }] } });
    expect(error?.hint).toMatch(/^Columns of "contacts": .*\bemail\b/);
  });
});

describe('deeply nested JSON', () => {
  const deep = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
  const send = (method: string, path: string, body: string) =>
    fetch(`${svc.url}/rest/v1/${path}`, {
      method,
      headers: {
        apikey: svc.anonKey,
        authorization: `Bearer ${owner.access_token}`,
        'content-type': 'application/json',
      },
      body,
    });

  it('refuses a value nested 5,000 deep in a text column with 400, not 500', async () => {
    const res = await send('POST', 'contacts', `{"first_name":"deep","notes":${deep(5000)}}`);
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toMatchObject({ error: 'validation_error', code: 'PGRST102' });
    expect(body.message).toMatch(/nests JSON more than 100 levels deep \(at notes(\.0)+\)/);
  });

  it('refuses the same in a jsonb column and in an update', async () => {
    const post = await send('POST', 'contacts', `[{"first_name":"deep","address":{"a":${deep(5000)}}}]`);
    expect(post.status).toBe(400);
    const patch = await send('PATCH', 'contacts?first_name=eq.nobody', `{"notes":${deep(5000)}}`);
    expect(patch.status).toBe(400);
    expect((await patch.json()).code).toBe('PGRST102');
  });

  it('keeps ordinary nesting', async () => {
    const res = await send('POST', 'contacts', `{"first_name":"shallow","address":{"a":${deep(50)}}}`);
    expect(res.status).toBe(201);
  });
});

describe('other tenants', () => {
  it('a value error on another tenant’s id says nothing of their rows', async () => {
    const { data } = await rest(other).from('contacts').insert({ email: 'theirs@example.test' }).select('id');
    const theirs = (data as { id: string }[])[0]?.id as string;
    const { error, status } = await rest().from('contacts').select().eq('id', theirs);
    expect(status).toBe(200);
    expect(error).toBeNull();
    // Their unique key taken in their organization is free in ours.
    expect((await rest().from('contacts').insert({ email: 'theirs@example.test' })).error).toBeNull();
  });
});

// Content negotiation on /rest/v1 (src/rest/accept.ts): CSV as PostgREST writes it (postgrest-js
// `.csv()`), the JSON forms, and 406 PGRST107 for an Accept nothing is produced for.
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../src/platform/db/database.ts';
import { orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let stranger: Session;

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Csv Ltd');
  stranger = await signUp(svc, 'Other Csv Ltd');
  await svc.services.db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      `insert into contacts (organization_id, first_name, last_name, company, tags) values
         ($1, 'Ann', 'Lee', 'Acme, Inc.', '{vip}'), ($1, 'Bob', null, 'Say "hi"', '{}'),
         ($2, 'Theirs', 'X', 'Elsewhere', '{}')`,
      [orgOf(owner), orgOf(stranger)],
    ),
  );
});
afterAll(() => svc?.stop());

const rest = (token: string) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${token}` },
  });

const get = (path: string, accept: string | undefined, token = owner.access_token) =>
  fetch(`${svc.url}/rest/v1/${path}`, {
    headers: { apikey: svc.anonKey, authorization: `Bearer ${token}`, ...(accept ? { accept } : {}) },
  });

describe('Accept on /rest/v1', () => {
  it('answers CSV to postgrest-js .csv(): a header line, then the rows as PostgreSQL writes records', async () => {
    const { data, error, status } = await rest(owner.access_token)
      .from('contacts')
      .select('first_name,last_name,company,tags')
      .order('first_name')
      .csv();
    expect(error).toBeNull();
    expect(status).toBe(200);
    // A comma or a quote puts the value in quotes (a quote doubled); NULL is empty; arrays as text.
    expect(data).toBe('first_name,last_name,company,tags\nAnn,Lee,"Acme, Inc.",{vip}\nBob,,"Say ""hi""",{}');
  });

  it('CSV holds only the caller’s rows, says so in its content type, and is empty but for nothing when no row matches', async () => {
    const res = await get('contacts?select=first_name&order=first_name', 'text/csv', stranger.access_token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(await res.text()).toBe('first_name\nTheirs');
    const none = await get('contacts?select=first_name&first_name=eq.Nobody', 'text/csv');
    expect(none.status).toBe(200);
    expect(await none.text()).toBe('\n');
  });

  it('CSV writes an embed as its JSON, quoted', async () => {
    const res = await get('organizations?select=name,plans(name)', 'text/csv');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('name,plans\n"Csv Ltd","{""name"":""Free""}"');
  });

  it('takes the most preferred type it produces, and JSON for */* or no Accept', async () => {
    const csvFirst = await get(
      'contacts?select=first_name&order=first_name&limit=1',
      'application/json;q=0.5, text/csv',
    );
    expect(await csvFirst.text()).toBe('first_name\nAnn');
    const jsonFirst = await get(
      'contacts?select=first_name&order=first_name&limit=1',
      'text/csv;q=0.2, application/json',
    );
    expect(await jsonFirst.json()).toEqual([{ first_name: 'Ann' }]);
    for (const accept of [undefined, '*/*', 'text/html,application/xhtml+xml,*/*;q=0.8']) {
      const res = await get('contacts?select=first_name&order=first_name&limit=1', accept);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await res.json()).toEqual([{ first_name: 'Ann' }]);
    }
  });

  it('answers 406 PGRST107 for an Accept it produces nothing for, instead of JSON', async () => {
    for (const accept of ['text/html', 'application/xml', 'application/json;q=0, text/plain']) {
      const res = await get('contacts?select=first_name', accept);
      expect(res.status, accept).toBe(406);
      const body = await res.json();
      expect(body).toMatchObject({
        error: 'not_acceptable',
        code: 'PGRST107',
        message: `None of these media types are available: ${accept}`,
      });
      expect(body.details).toBeDefined();
    }
    // postgrest-js hands the same to the caller.
    const { error, status } = await rest(owner.access_token)
      .from('contacts')
      .select('first_name')
      .setHeader('Accept', 'application/xml');
    expect(status).toBe(406);
    expect(error?.code).toBe('PGRST107');
  });

  it('a write asking only for CSV is refused before anything is written', async () => {
    const res = await fetch(`${svc.url}/rest/v1/contacts`, {
      method: 'POST',
      headers: {
        apikey: svc.anonKey,
        authorization: `Bearer ${owner.access_token}`,
        'content-type': 'application/json',
        accept: 'text/csv',
        prefer: 'return=representation',
      },
      body: JSON.stringify({ first_name: 'Csv write' }),
    });
    expect(res.status).toBe(406);
    expect((await res.json()).code).toBe('PGRST107');
    const { data } = await rest(owner.access_token)
      .from('contacts')
      .select('id')
      .eq('first_name', 'Csv write');
    expect(data).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// src/rest/read.ts keeps the plan and statement of a read by request shape, and request.ts the
// parsed query string: the same query string asked by other callers, or with other headers, must
// still be answered for each of them (docs/performance.md, "Three layers off the request path").
let svc: TestService;
let a: Session;
let b: Session;

const names = async (token: string, path: string, headers: Record<string, string> = {}) => {
  const r = await call(svc, 'GET', path, { token, headers });
  expect(r.status).toBeLessThan(300);
  return { names: (r.json as { first_name: string }[]).map((row) => row.first_name), r };
};

beforeAll(async () => {
  svc = await startTestService();
  a = await signUp(svc, 'Cache A');
  b = await signUp(svc, 'Cache B');
  for (const [who, rows] of [
    [a, ['a1', 'a2']],
    [b, ['b1', 'b2', 'b3']],
  ] as const) {
    const r = await call(svc, 'POST', '/rest/v1/contacts', {
      token: who.access_token,
      body: rows.map((first_name) => ({ first_name })),
    });
    expect(r.status).toBe(201);
  }
});

afterAll(() => svc?.close());

describe('reads of the same shape by other callers', () => {
  const path = '/rest/v1/contacts?select=first_name&order=first_name';

  it('answer each tenant with its own rows, whoever asked first', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await names(a.access_token, path)).names).toEqual(['a1', 'a2']);
      expect((await names(b.access_token, path)).names).toEqual(['b1', 'b2', 'b3']);
    }
  });

  it('count the tenant exactly after the service role asked for the planner’s estimate', async () => {
    const counted = `${path}&limit=1`;
    const service = await call(svc, 'GET', counted, {
      token: svc.serviceRoleKey,
      headers: { prefer: 'count=planned' },
    });
    expect(service.status).toBeLessThan(300);
    for (const [who, total] of [
      [a, 2],
      [b, 3],
    ] as const) {
      const { r } = await names(who.access_token, counted, { prefer: 'count=planned' });
      expect(r.headers.get('content-range')).toBe(`0-0/${total}`);
    }
  });

  it('page by each request’s own Range header', async () => {
    expect((await names(b.access_token, path, { range: '0-0' })).names).toEqual(['b1']);
    expect((await names(b.access_token, path, { range: '1-2' })).names).toEqual(['b2', 'b3']);
    expect((await names(b.access_token, path)).names).toEqual(['b1', 'b2', 'b3']);
  });

  it('refuse a bad query every time, not only the first', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await call(svc, 'GET', '/rest/v1/contacts?select=nope', { token: a.access_token });
      expect(r.status).toBe(400);
      expect(r.json.code).toBe('42703');
    }
  });
});

// Plans and statements are kept by the query's shape (src/rest/shape.ts): `id=eq.<id>` with any
// id is one entry, each request's literals bound where the first request's were.
describe('reads of the same shape with other values', () => {
  const ids = async (token: string) =>
    (
      (await call(svc, 'GET', '/rest/v1/contacts?select=id,first_name&order=first_name', { token })).json as {
        id: string;
        first_name: string;
      }[]
    ).map((r) => [r.first_name, r.id] as const);

  it('answer each request with the rows its own literals name', async () => {
    const rows = new Map(await ids(b.access_token));
    for (const [name, id] of rows) {
      const { names: got } = await names(b.access_token, `/rest/v1/contacts?select=first_name&id=eq.${id}`);
      expect(got).toEqual([name]);
    }
    // Two literals of one shape, each in its own place (not swapped, not shared).
    const both = (first: string, id: string) =>
      names(b.access_token, `/rest/v1/contacts?select=first_name&first_name=eq.${first}&id=neq.${id}`);
    expect((await both('b1', rows.get('b2') ?? '')).names).toEqual(['b1']);
    expect((await both('b2', rows.get('b2') ?? '')).names).toEqual([]);
    expect((await both('b3', rows.get('b1') ?? '')).names).toEqual(['b3']);
    const range = (lo: string, hi: string) =>
      names(
        b.access_token,
        `/rest/v1/contacts?select=first_name&first_name=gt.${lo}&first_name=lte.${hi}&order=first_name`,
      );
    expect((await range('b1', 'b3')).names).toEqual(['b2', 'b3']);
    expect((await range('a', 'b2')).names).toEqual(['b1', 'b2']);
    const negated = (v: string) =>
      names(b.access_token, `/rest/v1/contacts?select=first_name&first_name=not.eq.${v}&order=first_name`);
    expect((await negated('b2')).names).toEqual(['b1', 'b3']);
    expect((await negated('b1')).names).toEqual(['b2', 'b3']);
  });

  it('read encoded, quoted and pattern values as sent', async () => {
    const eq = (v: string) => names(b.access_token, `/rest/v1/contacts?select=first_name&first_name=eq.${v}`);
    expect((await eq('b1')).names).toEqual(['b1']);
    expect((await eq('%62%32')).names).toEqual(['b2']); // "b2", percent-encoded
    expect((await eq('%22b3%22')).names).toEqual(['b3']); // "\"b3\"": quoted, so unquoted
    expect((await eq('b%2A')).names).toEqual([]); // "b*" is a value, not a pattern, for eq
    const like = (v: string) =>
      names(b.access_token, `/rest/v1/contacts?select=first_name&first_name=like.${v}&order=first_name`);
    expect((await like('b*')).names).toEqual(['b1', 'b2', 'b3']);
    expect((await like('*3')).names).toEqual(['b3']);
  });

  it('refuse a value its column cannot hold, and then answer the next one', async () => {
    const r = await call(svc, 'GET', '/rest/v1/contacts?id=eq.not-a-uuid', { token: b.access_token });
    expect(r.status).toBe(400);
    const [[, id] = ['', '']] = await ids(b.access_token);
    expect(
      (await names(b.access_token, `/rest/v1/contacts?select=first_name&id=eq.${id}`)).names,
    ).toHaveLength(1);
  });
});

// request.ts parses a read's query string only when a stage asks for it (a read whose shape's
// statement is kept asks nothing of it); what a malformed one is answered must not change.
describe('a read’s query string parsed on demand', () => {
  const bad = 'select=first_name&limit=many';

  it('refuses a malformed query string before an unknown table or a strict Prefer', async () => {
    const known = await call(svc, 'GET', `/rest/v1/contacts?${bad}`, { token: a.access_token });
    expect(known.status).toBe(400);
    const unknown = await call(svc, 'GET', `/rest/v1/no_such_table?${bad}`, { token: a.access_token });
    expect([unknown.status, unknown.json]).toEqual([known.status, known.json]);
    const strict = await call(svc, 'GET', `/rest/v1/contacts?${bad}`, {
      token: a.access_token,
      headers: { prefer: 'handling=strict, bogus=1' },
    });
    expect([strict.status, strict.json]).toEqual([known.status, known.json]);
    // The same Prefer alone is refused for itself.
    const prefer = await call(svc, 'GET', '/rest/v1/contacts?select=first_name', {
      token: a.access_token,
      headers: { prefer: 'handling=strict, bogus=1' },
    });
    expect(prefer.status).toBe(400);
    expect(prefer.json).not.toEqual(known.json);
  });

  it('pages each row of a kept shape by its own Range header', async () => {
    const all = await names(b.access_token, '/rest/v1/contacts?select=first_name,id&order=first_name');
    const ids = (all.r.json as { id: string }[]).map((row) => row.id);
    for (const range of ['0-0', '0-1', '0-0']) {
      for (const id of ids) {
        const { names: got, r } = await names(
          b.access_token,
          `/rest/v1/contacts?select=first_name&order=first_name&id=gte.${id}`,
          { range },
        );
        const expected = all.names.filter((_, i) => ids[i] !== undefined && ids[i] >= id);
        const want = range === '0-0' ? expected.slice(0, 1) : expected.slice(0, 2);
        expect(got).toEqual(want);
        expect(r.headers.get('content-range')).toBe(`0-${want.length - 1}/*`);
      }
    }
  });
});

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

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/errors.ts';
import { parseRead } from '../../src/rest/parse.ts';
import { readPlan } from '../../src/rest/plan.ts';
import { readSql } from '../../src/rest/sql.ts';
import { signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let token: string;
beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '100000' });
  token = (await signUp(svc, 'Fuzz Ltd')).access_token;
});
afterAll(() => svc?.stop());

const MARK = '\u0001'; // no identifier, alias or cast may contain it, so it can only be a value
const pieces = [
  'eq.',
  'neq.',
  'gt.',
  'like.',
  'ilike.',
  'in.(',
  'is.',
  'isdistinct.',
  'match.',
  'cs.',
  'cd.',
  'ov.',
  'adj.',
  'fts(',
  'wfts.',
  'like(any).',
  'eq(all).',
  '{',
  '}',
  'not.',
  'or=(',
  'and(',
  ')',
  ',',
  '.',
  '*',
  '"',
  ':',
  '::',
  '!',
  '(',
  'null',
  'true',
  // the select grammar: embeds with hints and joins, spreads, aggregates
  '...',
  'orders(',
  'orders!inner(',
  '!left',
  'count()',
  '.sum()',
  '.avg()',
  'contacts.',
];
const names = [
  'first_name',
  'email',
  'tags',
  'id',
  'company',
  'select',
  'order',
  'limit',
  'offset',
  'or',
  'and',
  'nope',
  'x;drop',
  'orders.status',
  'orders',
];
const junk = fc
  .array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 6 })), { maxLength: 6 })
  .map((a) => a.join(''));
const value = fc.tuple(junk, fc.string({ maxLength: 8 })).map(([j, v]) => `${j}${MARK}${v}`);
const query = fc.array(
  fc.tuple(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 })), fc.oneof(value, junk)),
  {
    maxLength: 5,
  },
);

describe('the REST grammar under random input', () => {
  it('parses or refuses with a 4xx, and never puts a value into the SQL text', () => {
    const schema = svc.services.schema;
    const rel = schema.get('contacts');
    if (!rel) throw new Error('contacts missing');
    fc.assert(
      fc.property(query, (pairs) => {
        const params = new URLSearchParams(pairs);
        try {
          const plan = readPlan(schema, rel, parseRead(params), { limit: 25, offset: 0 }, 'exact', null);
          const sql = readSql(plan);
          expect(sql.text).not.toContain(MARK);
          expect((sql.text.match(/\$\d+/g) ?? []).length).toBeGreaterThanOrEqual(sql.values.length);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('answers random query strings over HTTP without a 500', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (pairs) => {
        const qs = new URLSearchParams(pairs).toString();
        const res = await fetch(`${svc.url}/rest/v1/contacts?${qs}`, {
          headers: { apikey: svc.anonKey, authorization: `Bearer ${token}` },
        });
        const body = await res.text();
        expect(res.status, `${qs} → ${body}`).toBeLessThan(500);
        expect(body).not.toMatch(/from public\.|select .* from/i);
      }),
      { numRuns: 150 },
    );
  });
});

import { PostgrestClient } from '@supabase/postgrest-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE } from '../../src/platform/db/database.ts';
import { Params } from '../../src/platform/db/params.ts';
import { parseRead } from '../../src/rest/parse.ts';
import type { Relation } from '../../src/rest/schema-cache.ts';
import { where } from '../../src/rest/sql.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;

// Five contacts a user would filter by tags (array), address (jsonb) and notes (full text).
const PEOPLE = [
  {
    first_name: 'Ada',
    company: 'Acme',
    tags: ['vip', 'lead'],
    address: { city: 'Berlin', zip: '10115' },
    notes: 'The quick brown fox jumps',
  },
  {
    first_name: 'Bob',
    company: 'Globex',
    tags: ['vip'],
    address: { city: 'Paris' },
    notes: 'A lazy brown dog sleeps',
  },
  { first_name: 'Cyd', company: null, tags: ['lead'], address: null, notes: 'Foxes are quick and brown' },
  { first_name: 'Dee', company: 'Acme', tags: [], address: { city: 'Berlin' }, notes: 'Nothing to see' },
  { first_name: 'Eve', company: 'Initech', tags: ['new'], address: { city: 'Rome' }, notes: null },
];

beforeAll(async () => {
  // The random-value property sends hundreds of requests: above the per-minute limit.
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '100000' });
  owner = await signUp(svc, 'Operators Ltd');
  const stranger = await signUp(svc, 'Other Ltd');
  for (const [org, rows] of [
    [orgOf(owner), PEOPLE],
    [orgOf(stranger), [{ ...PEOPLE[0], first_name: 'Theirs' }]],
  ] as const) {
    await svc.services.db.asPrincipal(SERVICE, (tx) =>
      tx.query(
        `insert into contacts (organization_id, first_name, company, tags, address, notes)
         select $1, r.first_name, r.company, r.tags, r.address, r.notes
           from jsonb_to_recordset($2::jsonb) as r(first_name text, company text, tags text[], address jsonb, notes text)`,
        [org, JSON.stringify(rows)],
      ),
    );
  }
});
afterAll(() => svc?.stop());

const rest = () =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${owner.access_token}` },
  });

// biome-ignore lint/suspicious/noExplicitAny: the query builder's type is deep; tests chain it freely
type Q = any;
/** The first names a query returns, in name order: what a user sees. */
async function names(build: (q: Q) => Q): Promise<string[]> {
  const { data, error } = await build(rest().from('contacts').select('first_name')).order('first_name');
  expect(error).toBeNull();
  return (data as { first_name: string }[]).map((r) => r.first_name);
}

describe('array and jsonb operators with @supabase/postgrest-js', () => {
  it('contains, containedBy and overlaps on a text[] column', async () => {
    expect(await names((q) => q.contains('tags', ['vip']))).toEqual(['Ada', 'Bob']);
    expect(await names((q) => q.contains('tags', ['vip', 'lead']))).toEqual(['Ada']);
    expect(await names((q) => q.containedBy('tags', ['vip', 'lead']))).toEqual(['Ada', 'Bob', 'Cyd', 'Dee']);
    expect(await names((q) => q.overlaps('tags', ['lead', 'new']))).toEqual(['Ada', 'Cyd', 'Eve']);
  });

  it('contains and containedBy on a jsonb column', async () => {
    expect(await names((q) => q.contains('address', { city: 'Berlin' }))).toEqual(['Ada', 'Dee']);
    expect(await names((q) => q.containedBy('address', { city: 'Berlin', zip: '10115' }))).toEqual([
      'Ada',
      'Dee',
    ]);
  });

  it('negates them with not, also inside or=(…) where the braces hold commas', async () => {
    expect(await names((q) => q.not('tags', 'cs', '{vip}'))).toEqual(['Cyd', 'Dee', 'Eve']);
    expect(await names((q) => q.or('tags.cs.{vip,lead},tags.cs.{new}'))).toEqual(['Ada', 'Eve']);
  });

  it('refuses an operator the column type lacks with a 400, not a 500', async () => {
    const { error, status } = await rest().from('contacts').select('id').overlaps('address', '{"a":1}');
    expect(status).toBe(400);
    expect(error?.message).not.toMatch(/select|from public/i);
  });
});

describe('full-text search', () => {
  it('textSearch with a language and each query type', async () => {
    expect(await names((q) => q.textSearch('notes', "'quick' & 'fox'", { config: 'english' }))).toEqual([
      'Ada',
      'Cyd',
    ]);
    expect(
      await names((q) => q.textSearch('notes', 'quick foxes', { config: 'english', type: 'plain' })),
    ).toEqual(['Ada', 'Cyd']);
    expect(
      await names((q) => q.textSearch('notes', 'brown fox', { config: 'english', type: 'phrase' })),
    ).toEqual(['Ada']);
    expect(
      await names((q) => q.textSearch('notes', 'brown -lazy', { config: 'english', type: 'websearch' })),
    ).toEqual(['Ada', 'Cyd']);
    expect(await names((q) => q.textSearch('notes', 'sleeps'))).toEqual(['Bob']);
    expect(await names((q) => q.not('notes', 'fts', 'brown'))).toEqual(['Dee']);
  });

  it('an unknown language is a 400', async () => {
    const { status } = await rest()
      .from('contacts')
      .select('id')
      .textSearch('notes', 'x', { config: 'klingon' });
    expect(status).toBe(400);
  });
});

describe('match, imatch, isdistinct and the any/all modifiers', () => {
  it('match and imatch are POSIX regular expressions', async () => {
    expect(await names((q) => q.filter('first_name', 'match', '^[AB]'))).toEqual(['Ada', 'Bob']);
    expect(await names((q) => q.filter('first_name', 'imatch', '^[ab]'))).toEqual(['Ada', 'Bob']);
    expect(await names((q) => q.filter('first_name', 'match', '^[ab]'))).toEqual([]);
    expect(await names((q) => q.not('first_name', 'imatch', 'e$'))).toEqual(['Ada', 'Bob', 'Cyd']);
  });

  it('isdistinct keeps rows whose value is null, unlike neq', async () => {
    expect(await names((q) => q.filter('company', 'isdistinct', 'Acme'))).toEqual(['Bob', 'Cyd', 'Eve']);
    expect(await names((q) => q.neq('company', 'Acme'))).toEqual(['Bob', 'Eve']);
    expect(await names((q) => q.not('company', 'isdistinct', 'Acme'))).toEqual(['Ada', 'Dee']);
  });

  it('likeAnyOf, likeAllOf, ilikeAnyOf and eq(any)/gt(all)', async () => {
    expect(await names((q) => q.likeAnyOf('first_name', ['A*', 'E*']))).toEqual(['Ada', 'Eve']);
    expect(await names((q) => q.likeAllOf('first_name', ['*e*', 'D*']))).toEqual(['Dee']);
    expect(await names((q) => q.ilikeAnyOf('first_name', ['a*', 'b*']))).toEqual(['Ada', 'Bob']);
    expect(await names((q) => q.filter('first_name', 'eq(any)', '{Bob,Cyd}'))).toEqual(['Bob', 'Cyd']);
    expect(await names((q) => q.filter('first_name', 'gt(all)', '{Bob,Cyd}'))).toEqual(['Dee', 'Eve']);
    expect(await names((q) => q.filter('first_name', 'imatch(any)', '{^a,^e}'))).toEqual(['Ada', 'Eve']);
    expect(await names((q) => q.not('first_name', 'like(any)', '{A*,E*}'))).toEqual(['Bob', 'Cyd', 'Dee']);
  });

  it('refuses a modifier on an operator that takes none, and a list without braces', async () => {
    for (const qs of [
      'first_name=neq(any).{a}',
      'first_name=like(some).{a}',
      'first_name=like(any).a*',
      'notes=fts().x',
    ]) {
      const r = await call(svc, 'GET', `/rest/v1/contacts?${qs}`, { token: owner.access_token });
      expect(r.status, qs).toBe(400);
      expect(r.json).toMatchObject({ code: 'PGRST100', error: 'validation_error' });
    }
  });
});

describe('is.unknown', () => {
  it('is the three-valued test on a boolean: a not-null column is never unknown', async () => {
    // Sign-up gave the organization its default warehouse.
    const wh = async (build: (q: Q) => Q) => {
      const { data, error } = await build(rest().from('warehouses').select('name,is_default')).order('name');
      expect(error).toBeNull();
      return data as { name: string; is_default: boolean }[];
    };
    const all = await wh((q) => q);
    expect(all.length).toBeGreaterThan(0);
    expect(await wh((q) => q.is('is_default', 'unknown' as unknown as null))).toEqual([]);
    expect(await wh((q) => q.not('is_default', 'is', 'unknown'))).toEqual(all);
    expect(await wh((q) => q.filter('is_default', 'isdistinct', 'true'))).toEqual(
      all.filter((w) => !w.is_default),
    );
  });
});

describe('the new operators under random values', () => {
  it('answer 200 or a 4xx, never a 500, on every column type', async () => {
    const ops = [
      'cs',
      'cd',
      'ov',
      'sl',
      'adj',
      'fts',
      'wfts(english)',
      'fts(x)',
      'match',
      'imatch',
      'isdistinct',
      'like(any)',
      'gt(all)',
      'eq(any)',
    ];
    const columns = ['first_name', 'tags', 'address', 'notes', 'created_at', 'id', 'address->city'];
    const value = fc.oneof(
      fc.string({ maxLength: 10 }),
      fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }).map((a) => `{${a.join(',')}}`),
      fc.constantFrom('{"a":1}', '[1,2)', '(', '\\', 'a & | !', '"'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...columns),
        fc.constantFrom(...ops),
        fc.boolean(),
        value,
        async (col, op, not, v) => {
          const qs = new URLSearchParams({
            select: 'id',
            [col]: `${not ? 'not.' : ''}${op}.${v}`,
          }).toString();
          const r = await call(svc, 'GET', `/rest/v1/contacts?${qs}`, { token: owner.access_token });
          expect(r.status, `${qs} → ${JSON.stringify(r.json)}`).toBeLessThan(500);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('range operators', () => {
  // No table exposes a range column, so the operators run on a relation of the same shape.
  const rel = {
    name: 'periods',
    columns: new Map([['period', { name: 'period', type: 'int4range', nullable: false }]]),
  } as unknown as Relation;
  const matching = async (qs: string) => {
    const p = new Params();
    const filter = where(rel, parseRead(new URLSearchParams(qs)).filters, p);
    const rows = await svc.services.db.asPrincipal(SERVICE, (tx) =>
      tx.query<{ period: string }>(
        `select period::text from (values (int4range(1,5)), (int4range(5,10)), (int4range(20,30))) as t0(period) where ${filter} order by 1`,
        p.values,
      ),
    );
    return rows.map((r) => r.period);
  };

  it('sl sr nxl nxr adj ov cs cd, negated too', async () => {
    expect(await matching('period=sl.[10,15)')).toEqual(['[1,5)', '[5,10)']);
    expect(await matching('period=sr.[10,15)')).toEqual(['[20,30)']);
    expect(await matching('period=nxl.[1,8)')).toEqual(['[1,5)']);
    expect(await matching('period=nxr.[6,8)')).toEqual(['[20,30)']);
    expect(await matching('period=adj.[10,20)')).toEqual(['[20,30)', '[5,10)']);
    expect(await matching('period=ov.[4,6)')).toEqual(['[1,5)', '[5,10)']);
    expect(await matching('period=cs.[21,22)')).toEqual(['[20,30)']);
    expect(await matching('period=cd.[0,10)')).toEqual(['[1,5)', '[5,10)']);
    expect(await matching('period=not.ov.[4,6)')).toEqual(['[20,30)']);
  });
});

describe('rpc', () => {
  it('answers PostgREST PGRST202 for any function, with or without parameters', async () => {
    const { data, error, status } = await rest().rpc('do_things');
    expect(status).toBe(404);
    expect(data).toBeNull();
    expect(error).toMatchObject({
      code: 'PGRST202',
      message: 'Could not find the function public.do_things without parameters in the schema cache',
      hint: null,
    });
    const posted = await call(svc, 'POST', '/rest/v1/rpc/add_like', {
      token: owner.access_token,
      body: { p_user: 1, a_song: 2 },
    });
    expect(posted.status).toBe(404);
    expect(posted.json).toMatchObject({
      error: 'not_found',
      code: 'PGRST202',
      message: 'Could not find the function public.add_like(a_song, p_user) in the schema cache',
      details: {
        searched:
          'Searched for the function public.add_like with parameters a_song, p_user or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      },
    });
    const got = await rest().rpc('lookup', { q: 'x' }, { get: true });
    expect(got.status).toBe(404);
    expect(got.error?.message).toBe('Could not find the function public.lookup(q) in the schema cache');
  });
});

describe('Prefer: handling', () => {
  const read = (prefer: string) =>
    call(svc, 'GET', '/rest/v1/contacts?select=first_name', {
      token: owner.access_token,
      headers: { prefer },
    });

  it('strict refuses unknown or invalid preferences with PGRST122; lenient ignores them', async () => {
    const strict = await read('handling=strict, foo, count=maybe');
    expect(strict.status).toBe(400);
    expect(strict.json).toMatchObject({
      error: 'validation_error',
      code: 'PGRST122',
      message: 'Invalid preferences given with handling=strict',
      details: { invalid_preferences: ['foo', 'count=maybe'] },
    });
    expect((await read('handling=lenient, foo, count=maybe')).status).toBe(200);
    expect((await read('foo')).status).toBe(200);
    expect((await read('handling=strict, count=exact')).status).toBe(200);
    const insert = await call(svc, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      headers: { prefer: 'handling=strict,return=everything' },
      body: { first_name: 'Never' },
    });
    expect(insert.status).toBe(400);
    expect(await names((q) => q.eq('first_name', 'Never'))).toEqual([]);
  });
});

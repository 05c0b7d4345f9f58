import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/platform/errors.ts';
import { parseRead } from '../../src/rest/parse.ts';
import { readPlan } from '../../src/rest/plan.ts';
import { parsePrefer } from '../../src/rest/prefer.ts';
import type { Relation, SchemaCache } from '../../src/rest/schema-cache.ts';
import { plannedCountSql, readSql } from '../../src/rest/sql.ts';

// The middle stages of /rest/v1 without a server: the Prefer header into a typed value, and a
// query string through parse → plan → SQL. What a caller sends must never become SQL text.

describe('Prefer, read once', () => {
  const cases: [header: string | undefined, expected: Partial<ReturnType<typeof parsePrefer>>][] = [
    [undefined, { return: 'minimal', count: null, resolution: null, missing: 'null' }],
    ['return=representation', { return: 'representation' }],
    // postgrest-js joins several in one header
    ['return=representation,count=exact', { return: 'representation', count: 'exact' }],
    ['count=planned', { count: 'planned' }],
    ['count=estimated', { count: 'estimated' }],
    ['resolution=merge-duplicates, missing=default', { resolution: 'merge-duplicates', missing: 'default' }],
    ['resolution=ignore-duplicates', { resolution: 'ignore-duplicates' }],
    ['return=headers-only', { return: 'headers-only' }],
    // lenient (the default) ignores what it does not know
    ['return=everything, tx=rollback, count=exact', { return: 'minimal', count: 'exact' }],
    ['handling=lenient, timezone=UTC', { count: null }],
  ];
  it.each(cases)('%s', (header, expected) => {
    expect(parsePrefer(header)).toMatchObject(expected);
  });

  it('handling=strict refuses each unknown or unhonoured preference, by name (PGRST122)', () => {
    try {
      parsePrefer('handling=strict, return=representation, tx=commit, count=bogus');
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).status).toBe(400);
      expect((err as AppError).extra.code).toBe('PGRST122');
      expect((err as AppError).details).toEqual({ invalid_preferences: ['tx=commit', 'count=bogus'] });
    }
    expect(parsePrefer('handling=strict, return=representation').return).toBe('representation');
  });
});

const col = (name: string, type = 'text') => [name, { name, type, nullable: true }] as const;
const ORDERS: Relation = {
  name: 'orders',
  kind: 'table',
  columns: new Map([
    col('organization_id', 'uuid'),
    col('id', 'uuid'),
    col('contact_id', 'uuid'),
    col('status'),
    col('total', 'numeric'),
  ]),
  pk: ['organization_id', 'id'],
  fks: [
    {
      name: 'orders_contact_fk',
      columns: ['organization_id', 'contact_id'],
      table: 'contacts',
      refColumns: ['organization_id', 'id'],
    },
  ],
  uniques: [],
  checks: [],
};
const CONTACTS: Relation = {
  name: 'contacts',
  kind: 'table',
  columns: new Map([col('organization_id', 'uuid'), col('id', 'uuid'), col('first_name')]),
  pk: ['organization_id', 'id'],
  fks: [],
  uniques: [],
  checks: [],
};
const SCHEMA: SchemaCache = new Map([
  ['orders', ORDERS],
  ['contacts', CONTACTS],
]);
const ORG = '00000000-0000-4000-8000-000000000001';

const plan = (qs: string, count: 'exact' | 'planned' | null = null) =>
  readPlan(SCHEMA, ORDERS, parseRead(new URLSearchParams(qs)), { limit: 25, offset: 0 }, count, ORG);

describe('parse → plan → SQL', () => {
  it('binds the caller’s organization and every value; identifiers come quoted from the catalog', () => {
    const sql = readSql(plan("status=eq.x'); drop table orders; --&select=status,total"));
    expect(sql.text).toContain('t0.organization_id = $1::uuid');
    expect(sql.values).toContain(ORG);
    expect(sql.values).toContain("x'); drop table orders; --");
    expect(sql.text).not.toContain('drop table');
    expect(sql.text).toContain('t0."status" as "status"');
  });

  it('!inner becomes an exists condition on the parent, with the child’s filter inside it', () => {
    const sql = readSql(plan('select=id,contacts!inner(first_name)&contacts.first_name=eq.Ann'));
    expect(sql.text).toMatch(
      /where t0\.organization_id = \$\d+::uuid and exists \(select 1 from public\."contacts" as t1 where/,
    );
    expect(sql.values).toContain('Ann');
  });

  it('a spread is a lateral join of the to-one relation', () => {
    const sql = readSql(plan('select=id,...contacts(first_name)'));
    expect(sql.text).toContain(
      'left join lateral (select t1."first_name" as "first_name" from public."contacts" as t1',
    );
    expect(sql.text).toContain('s0_1.*');
  });

  it('aggregates group by the positions of the plain columns', () => {
    const sql = readSql(plan('select=status,count(),total.sum()'));
    expect(sql.text).toContain('count(*) as "count", sum(t0."total") as "sum"');
    expect(sql.text).toContain('group by 1');
  });

  it('a cast before an aggregate applies to the column, after it to the result (as PostgREST)', () => {
    const sql = readSql(plan('select=total::text.max(),big:total.sum()::int'));
    expect(sql.text).toContain('max(t0."total"::text) as "max"');
    expect(sql.text).toContain('sum(t0."total")::int as "big"');
  });

  it('count=exact counts in the same statement; count=planned leaves it to EXPLAIN', () => {
    expect(readSql(plan('', 'exact')).text).toContain('select count(*) from (select 1 from public."orders"');
    const planned = plan('', 'planned');
    expect(readSql(planned).text).toContain('null::bigint as total');
    expect(plannedCountSql(planned).text).toMatch(
      /^explain \(format json\) select 1 from public\."orders" as t0 where/,
    );
  });

  it('names the unknown column and lists the real ones', () => {
    expect(() => plan('select=nope')).toThrowError(/Column "nope" does not exist on "orders"/);
    expect(() => plan('select=id,contacts(nope)')).toThrowError(/Column "nope" does not exist on "contacts"/);
  });
});

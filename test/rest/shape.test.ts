// src/rest/shape.ts: which literals of a query string are taken out of its shape, and the check
// that a statement binds each of them exactly once.
import { describe, expect, it } from 'vitest';
import { shapeOf, slotsOf } from '../../src/rest/shape.ts';

describe('shapeOf', () => {
  it('takes out the literals of plain comparisons, decoded', () => {
    const a = shapeOf('select=id&id=eq.11111111-1111-1111-1111-111111111111&age=not.gte.18');
    const b = shapeOf('select=id&id=eq.22222222-2222-2222-2222-222222222222&age=not.gte.40');
    expect(a?.key).toBe(b?.key);
    expect(a?.literals).toEqual(['11111111-1111-1111-1111-111111111111', '18']);
    expect(shapeOf('name=eq.a+b%2Fc')?.literals).toEqual(['a b/c']);
    expect(shapeOf('order_items.quantity=gt.2')?.literals).toEqual(['2']);
  });

  it('keeps everything else in the shape as sent', () => {
    for (const search of [
      'select=id&order=id&limit=25&offset=50',
      'name=ilike.*ann*',
      'name=is.null',
      'id=in.(1,2)',
      'name=eq."quoted"',
      'or=(id.eq.1,id.eq.2)',
      'order_items.limit=2',
      'tags=cs.{a}',
      'name=eq.%zz',
    ])
      expect(shapeOf(search), search).toBeNull();
    expect(shapeOf('limit=5&id=eq.1')?.key).not.toBe(shapeOf('limit=6&id=eq.1')?.key);
    expect(shapeOf('id=eq.1')?.key).not.toBe(shapeOf('id=gt.1')?.key);
  });

  it('renders the query string with stand-ins that decode to themselves', () => {
    const shape = shapeOf('id=eq.1&name=lt.b');
    const params = new URLSearchParams(shape?.render((i) => `\u0001${i}&=+`));
    expect([params.get('id'), params.get('name')]).toEqual(['eq.\u00010&=+', 'lt.\u00011&=+']);
  });
});

describe('shapeOf over many query strings', () => {
  // A small generator of query strings (seeded: the same strings on every run) from parts that
  // are and are not comparisons, encoded and not, malformed escapes among them.
  const names = [
    'id',
    'name',
    'select',
    'order',
    'limit',
    'not.x',
    'a.order',
    'a.b',
    'items.qty',
    '',
    '%41',
    'n%zz',
    'x+y',
  ];
  const values = [
    'eq.1',
    'neq.ab',
    'gt.5',
    'gte.5',
    'lt.z',
    'lte.%22q',
    'not.eq.3',
    'eq."q"',
    'is.null',
    'in.(1,2)',
    'eq.%zz',
    'eq.a+b%2Fc',
    'eq.a+b',
    'eq.',
    'eqx.1',
    'gt',
    'eq%2E5',
    'lt.%E2%82%AC',
    'id.asc',
  ];
  let seed = 42;
  const pick = <T>(xs: T[]) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return xs[seed % xs.length] as T;
  };
  const queries = Array.from({ length: 3000 }, () =>
    Array.from({ length: 1 + (pick([0, 1, 2, 3]) as number) }, () =>
      pick([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]) === 0 ? pick(names) : `${pick(names)}=${pick(values)}`,
    ).join('&'),
  );
  const entries = (q: string) => [...new URLSearchParams(q)];

  it('renders back what it was made from, and keys alike strings that differ only in literals', () => {
    let shaped = 0;
    for (const q of queries) {
      const shape = shapeOf(q);
      if (!shape) continue;
      shaped++;
      expect(entries(shape.render((i) => shape.literals[i] as string)), q).toEqual(entries(q));
      const other = shapeOf(shape.render((i) => `other ${i}/&=+`));
      expect(other?.key, q).toBe(shape.key);
      expect(other?.literals, q).toEqual(shape.literals.map((_, i) => `other ${i}/&=+`));
    }
    expect(shaped).toBeGreaterThan(500); // not vacuous
  });
});

describe('slotsOf', () => {
  const m = (i: number) => `<${i}>`;
  it('finds each literal once among the bound values', () => {
    const made = { text: 'q', values: ['org', 'x', 25, 'y'] };
    const marked = { text: 'q', values: ['org', '<0>', 25, '<1>'] };
    expect(slotsOf(made, marked, ['x', 'y'], m)).toEqual([1, 3]);
  });

  it('refuses statements that differ in anything else', () => {
    const made = { text: 'q', values: ['x'] };
    expect(slotsOf(made, { text: 'other', values: ['<0>'] }, ['x'], m)).toBeNull();
    expect(slotsOf(made, { text: 'q', values: ['x'] }, ['x'], m)).toBeNull(); // not bound where marked
    expect(
      slotsOf({ text: 'q', values: ['x', 'x'] }, { text: 'q', values: ['<0>', '<0>'] }, ['x'], m),
    ).toBeNull();
    expect(slotsOf({ text: 'q', values: ['X'] }, { text: 'q', values: ['<0>'] }, ['x'], m)).toBeNull(); // transformed
  });
});

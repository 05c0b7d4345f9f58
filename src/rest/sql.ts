import { AppError } from '../platform/errors.ts';
import type { Condition, Filter, ReadQuery } from './parse.ts';
import type { Relation } from './schema-cache.ts';

/** Identifiers come from the schema cache only; this quotes what the catalog already named. */
export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

const unknownColumn = (rel: Relation, column: string) =>
  new AppError(
    400,
    'validation_error',
    `Column "${column}" does not exist on "${rel.name}"`,
    {},
    { code: '42703', hint: null },
  );

/** Collects bound values; every value in a request becomes $n, never text in the statement. */
export class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

function column(rel: Relation, name: string) {
  const c = rel.columns.get(name);
  if (!c) throw unknownColumn(rel, name);
  return c;
}

const LIKE = (v: string) => v.replaceAll('*', '%');
const COMPARE = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
const IS = { null: 'null', true: 'true', false: 'false', unknown: 'unknown' } as const;

function condition(rel: Relation, c: Condition, p: Params): string {
  const col = column(rel, c.column);
  const lhs = ident(col.name);
  let sql: string;
  switch (c.op) {
    case 'like':
    case 'ilike':
      sql = `${lhs}::text ${c.op} ${p.add(LIKE(c.value as string))}`;
      break;
    case 'in':
      sql = `${lhs} = any(${p.add(c.value)}::${col.type}[])`;
      break;
    case 'is':
      sql = `${lhs} is ${IS[(c.value as string).toLowerCase() as keyof typeof IS]}`;
      break;
    default:
      sql = `${lhs} ${COMPARE[c.op]} ${p.add(c.value)}::${col.type}`;
  }
  return c.negate ? `not (${sql})` : sql;
}

export function where(rel: Relation, filters: Filter[], p: Params, joiner: 'and' | 'or' = 'and'): string {
  const parts = filters.map((f) => {
    if (f.kind === 'cond') return condition(rel, f, p);
    const inner = where(rel, f.items, p, f.op);
    return f.negate ? `not (${inner})` : `(${inner})`;
  });
  return parts.length ? parts.join(` ${joiner} `) : 'true';
}

export function selectList(rel: Relation, q: Pick<ReadQuery, 'select'>): string {
  return q.select
    .flatMap((item) => {
      if (item.column === '*') return [...rel.columns.keys()].map(ident);
      const col = column(rel, item.column);
      const expr = item.cast ? `${ident(col.name)}::${item.cast}` : ident(col.name);
      return [`${expr} as ${ident(item.alias ?? col.name)}`];
    })
    .join(', ');
}

export type ReadSql = { text: string; values: unknown[] };

/**
 * One statement: the page as a JSON array (built by Postgres, as PostgREST does), the number of
 * rows in it and, when asked, the total matching the filters.
 */
export function readSql(
  rel: Relation,
  q: ReadQuery,
  page: { limit: number; offset: number },
  count: boolean,
): ReadSql {
  const p = new Params();
  const table = `public.${ident(rel.name)}`;
  const filter = where(rel, q.filters, p);
  const order = q.order
    .map(
      (o) =>
        `${ident(column(rel, o.column).name)} ${o.descending ? 'desc' : 'asc'}${o.nulls ? ` nulls ${o.nulls}` : ''}`,
    )
    .join(', ');
  const limit = p.add(page.limit);
  const offset = p.add(page.offset);
  const total = count ? `(select count(*) from ${table} where ${filter})` : 'null::bigint';
  const text = `with page as (select ${selectList(rel, q)} from ${table} where ${filter}${order ? ` order by ${order}` : ''} limit ${limit} offset ${offset})
    select coalesce(json_agg(page), '[]')::text as body, count(page.*)::int as returned, ${total} as total from page`;
  return { text, values: p.values };
}

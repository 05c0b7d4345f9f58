import { Params } from '../platform/db/params.ts';
import { AppError } from '../platform/errors.ts';
import type { Condition, EmbeddedQuery, Filter, OrderTerm, ReadQuery, SelectItem } from './parse.ts';
import type { Relation, SchemaCache } from './schema-cache.ts';

/** Identifiers come from the schema cache only; this quotes what the catalog already named. */
export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

const unknownColumn = (rel: Relation, column: string) =>
  new AppError(
    400,
    'validation_error',
    `Column "${column}" does not exist on "${rel.name}"`,
    { issues: [{ path: column, message: 'no such column' }] },
    { code: '42703', hint: columnsHint(rel) },
  );

/** What a misspelt column could have been: the columns the interface serves on the table. */
export const columnsHint = (rel: Relation) =>
  `Columns of "${rel.name}": ${[...rel.columns.keys()].join(', ')}`;

function column(rel: Relation, name: string) {
  const c = rel.columns.get(name);
  if (!c) throw unknownColumn(rel, name);
  return c;
}

const LIKE = (v: string) => v.replaceAll('*', '%');
const COMPARE = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
/** Text patterns: the column is read as text, the value is the pattern. */
const PATTERN = { like: 'like', ilike: 'ilike', match: '~', imatch: '~*' } as const;
/** Array, jsonb and range operators: the value is cast to the column's type, as PostgREST does. */
const CONTAINMENT = {
  cs: '@>',
  cd: '<@',
  ov: '&&',
  sl: '<<',
  sr: '>>',
  nxl: '&<',
  nxr: '&>',
  adj: '-|-',
} as const;
const TSQUERY = {
  fts: 'to_tsquery',
  plfts: 'plainto_tsquery',
  phfts: 'phraseto_tsquery',
  wfts: 'websearch_to_tsquery',
} as const;
const IS = { null: 'null', true: 'true', false: 'false', unknown: 'unknown' } as const;

/**
 * A column or a JSON path into one, as SQL: keys are bound parameters. The type is the column's,
 * `text` after `->>` and `jsonb` after `->`. The default output name is the last key.
 */
export function columnExpr(rel: Relation, ref: string, p: Params) {
  const [head = '', ...rest] = ref.split(/(->>?)/);
  const col = column(rel, head);
  let sql = ident(col.name);
  let type = col.type;
  let label = col.name;
  for (let i = 0; i < rest.length; i += 2) {
    const arrow = rest[i] as '->' | '->>';
    const key = rest[i + 1] as string;
    sql = `${sql}${arrow}${p.add(/^\d+$/.test(key) ? Number(key) : key)}::${/^\d+$/.test(key) ? 'int' : 'text'}`;
    type = arrow === '->>' ? 'text' : 'jsonb';
    label = key;
  }
  return { sql: rest.length ? `(${sql})` : sql, type, label };
}

/** `col op any|all($n::type[])`: the `{a,b}` literal is read by Postgres as an array of the column's type. */
function quantified(lhs: string, type: string, c: Condition, p: Params): string {
  const q = c.quantifier as 'any' | 'all';
  const value = c.value as string;
  if (c.op in PATTERN) {
    const pattern = c.op === 'like' || c.op === 'ilike' ? LIKE(value) : value;
    return `${lhs}::text ${PATTERN[c.op as keyof typeof PATTERN]} ${q}(${p.add(pattern)}::text[])`;
  }
  return `${lhs} ${COMPARE[c.op as keyof typeof COMPARE]} ${q}(${p.add(value)}::${type}[])`;
}

/** `col @@ to_tsquery(…)`; a column not already a tsvector is read with to_tsvector in the same language. */
function textSearch(lhs: string, type: string, c: Condition, p: Params): string {
  const lang = c.language === undefined ? '' : `${p.add(c.language)}::regconfig, `;
  const doc = type === 'tsvector' ? lhs : `to_tsvector(${lang}${lhs})`;
  return `${doc} @@ ${TSQUERY[c.op as keyof typeof TSQUERY]}(${lang}${p.add(c.value)})`;
}

function condition(rel: Relation, c: Condition, p: Params): string {
  const expr = columnExpr(rel, c.column, p);
  const col = { type: expr.type };
  const lhs = expr.sql;
  let sql: string;
  if (c.quantifier) sql = quantified(lhs, col.type, c, p);
  else if (c.op in TSQUERY) sql = textSearch(lhs, col.type, c, p);
  else if (c.op in CONTAINMENT)
    sql = `${lhs} ${CONTAINMENT[c.op as keyof typeof CONTAINMENT]} ${p.add(c.value)}::${col.type}`;
  else if (c.op in PATTERN) {
    const value = c.op === 'like' || c.op === 'ilike' ? LIKE(c.value as string) : c.value;
    sql = `${lhs}::text ${PATTERN[c.op as keyof typeof PATTERN]} ${p.add(value)}`;
  } else if (c.op === 'in') {
    // An array column compares whole arrays: each listed value is an array literal.
    sql = col.type.endsWith('[]')
      ? `${lhs} in (select x::${col.type} from unnest(${p.add(c.value)}::text[]) x)`
      : `${lhs} = any(${p.add(c.value)}::${col.type}[])`;
  } else if (c.op === 'is') sql = `${lhs} is ${IS[(c.value as string).toLowerCase() as keyof typeof IS]}`;
  else if (c.op === 'isdistinct') sql = `${lhs} is distinct from ${p.add(c.value)}::${col.type}`;
  else sql = `${lhs} ${COMPARE[c.op as keyof typeof COMPARE]} ${p.add(c.value)}::${col.type}`;
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

type Link = { child: Relation; pairs: [parentColumn: string, childColumn: string][]; many: boolean };

/**
 * How `name` relates to `parent`: through a foreign key of the parent (many-to-one: an object) or
 * of `name` (one-to-many: an array). `hint` (`name!fk_or_column`) picks one when several match.
 */
function link(schema: SchemaCache, parent: Relation, name: string, hint?: string): Link {
  const child = schema.get(name);
  if (!child)
    throw new AppError(
      400,
      'validation_error',
      `No relation "${name}" to embed`,
      {},
      { code: 'PGRST200', hint: null },
    );
  const matches = (fk: { name: string; columns: string[] }) =>
    !hint || fk.name === hint || fk.columns.includes(hint);
  const links: Link[] = [
    ...parent.fks
      .filter((fk) => fk.table === child.name && matches(fk))
      .map((fk) => ({
        child,
        many: false,
        pairs: fk.columns.map((c, i) => [c, fk.refColumns[i] as string] as [string, string]),
      })),
    ...child.fks
      .filter((fk) => fk.table === parent.name && matches(fk))
      .map((fk) => ({
        child,
        many: true,
        pairs: fk.refColumns.map((c, i) => [c, fk.columns[i] as string] as [string, string]),
      })),
  ];
  if (links.length === 0) {
    throw new AppError(
      400,
      'validation_error',
      `"${parent.name}" and "${name}" are not related by a foreign key`,
      {},
      {
        code: 'PGRST200',
        hint: null,
      },
    );
  }
  if (links.length > 1) {
    throw new AppError(
      300,
      'ambiguous_embedding',
      `More than one relationship joins "${parent.name}" and "${name}"`,
      {},
      {
        code: 'PGRST201',
        hint: `Name one: ${name}!<foreign key name>(…)`,
      },
    );
  }
  return links[0] as Link;
}

type SelectContext = { schema: SchemaCache; p: Params; embedded?: Map<string, EmbeddedQuery> };

// Qualified with the table alias: an output alias of the same name must not change the order.
const orderBy = (rel: Relation, order: OrderTerm[], alias = 't0') =>
  order
    .map(
      (o) =>
        `${alias}.${ident(column(rel, o.column).name)} ${o.descending ? 'desc' : 'asc'}${o.nulls ? ` nulls ${o.nulls}` : ''}`,
    )
    .join(', ');

/**
 * The select list of `rel` (aliased t<depth>); embedded relations become correlated subqueries
 * built by Postgres, narrowed by their own filters, order and limit (`path.column=…`).
 */
export function selectList(
  rel: Relation,
  select: SelectItem[],
  ctx: SelectContext,
  depth = 0,
  prefix = '',
): string {
  const { p } = ctx;
  return select
    .flatMap((item) => {
      if (item.column === '*' && !item.embed) return [...rel.columns.keys()].map(ident);
      if (item.embed) {
        const l = link(ctx.schema, rel, item.column, item.embed.hint);
        const label = item.alias ?? item.column;
        const path = prefix ? `${prefix}.${label}` : label;
        const own = ctx.embedded?.get(path);
        const inner = `t${depth + 1}`;
        const on = [
          ...l.pairs.map(([pc, cc]) => `${inner}.${ident(cc)} = t${depth}.${ident(pc)}`),
          ...(own?.filters.length ? [`(${where(l.child, own.filters, p)})`] : []),
        ].join(' and ');
        const order = own?.order.length ? ` order by ${orderBy(l.child, own.order, inner)}` : '';
        const limit = own?.limit !== undefined ? ` limit ${p.add(own.limit)}` : '';
        const body = `select ${selectList(l.child, item.embed.select, ctx, depth + 1, path)} from public.${ident(l.child.name)} as ${inner} where ${on}${order}${limit}`;
        const expr = l.many
          ? `coalesce((select json_agg(x) from (${body}) x), '[]'::json)`
          : `(select row_to_json(x) from (${body}) x)`;
        return [`${expr} as ${ident(label)}`];
      }
      const ref = columnExpr(rel, item.column, p);
      const expr = item.cast ? `${ref.sql}::${item.cast}` : ref.sql;
      return [`${expr} as ${ident(item.alias ?? ref.label)}`];
    })
    .join(', ');
}

export type ReadSql = { text: string; values: unknown[] };

/**
 * One statement: the page as a JSON array (built by Postgres, as PostgREST does), the number of
 * rows in it and, when asked, the total matching the filters.
 */
export function readSql(
  schema: SchemaCache,
  rel: Relation,
  q: ReadQuery,
  page: { limit: number; offset: number },
  count: boolean,
): ReadSql {
  const p = new Params();
  const table = `public.${ident(rel.name)}`;
  const filter = where(rel, q.filters, p);
  const order = orderBy(rel, q.order);
  const limit = p.add(page.limit);
  const offset = p.add(page.offset);
  const total = count ? `(select count(*) from ${table} where ${filter})` : 'null::bigint';
  const text = `with page as (select ${selectList(rel, q.select, { schema, p, embedded: q.embedded })} from ${table} as t0 where ${filter}${order ? ` order by ${order}` : ''} limit ${limit} offset ${offset})
    select coalesce(json_agg(page), '[]')::text as body, count(page.*)::int as returned, ${total} as total from page`;
  return { text, values: p.values };
}

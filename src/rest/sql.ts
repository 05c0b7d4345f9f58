import { MAX_CANDIDATES } from '../domain/search-candidates.ts';
import { Params } from '../platform/db/params.ts';
import type { Filter } from './parse.ts';
import {
  type ColumnPath,
  type Field,
  type NodePlan,
  type PlanCondition,
  type PlanFilter,
  type ReadPlan,
  resolveFilters,
} from './plan.ts';
import type { Relation } from './schema-cache.ts';

// The third stage: a plan rendered as one statement and its bound values. Pure: no database, no
// HTTP. Identifiers come from the plan, which took them from the schema cache; every value is a
// bound parameter.

/** Quotes what the catalog already named. */
export const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

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

/** A column or a JSON path into one, on the table aliased `alias`: keys are bound parameters. */
function pathSql(ref: ColumnPath, alias: string, p: Params): string {
  let sql = `${alias}.${ident(ref.column.name)}`;
  for (const { arrow, key } of ref.keys)
    sql = `${sql}${arrow}${p.add(key)}::${typeof key === 'number' ? 'int' : 'text'}`;
  return ref.keys.length ? `(${sql})` : sql;
}

/** `col op any|all($n::type[])`: the `{a,b}` literal is read by Postgres as an array of the column's type. */
function quantified(lhs: string, c: PlanCondition, p: Params): string {
  const q = c.quantifier as 'any' | 'all';
  const value = c.value as string;
  if (c.op in PATTERN) {
    const pattern = c.op === 'like' || c.op === 'ilike' ? LIKE(value) : value;
    return `${lhs}::text ${PATTERN[c.op as keyof typeof PATTERN]} ${q}(${p.add(pattern)}::text[])`;
  }
  return `${lhs} ${COMPARE[c.op as keyof typeof COMPARE]} ${q}(${p.add(value)}::${c.ref.type}[])`;
}

/** `col @@ to_tsquery(…)`; a column not already a tsvector is read with to_tsvector in the same language. */
function textSearch(lhs: string, c: PlanCondition, p: Params): string {
  const lang = c.language === undefined ? '' : `${p.add(c.language)}::regconfig, `;
  const doc = c.ref.type === 'tsvector' ? lhs : `to_tsvector(${lang}${lhs})`;
  return `${doc} @@ ${TSQUERY[c.op as keyof typeof TSQUERY]}(${lang}${p.add(c.value)})`;
}

function condition(c: PlanCondition, alias: string, p: Params): string {
  const lhs = pathSql(c.ref, alias, p);
  const type = c.ref.type;
  let sql: string;
  if (c.quantifier) sql = quantified(lhs, c, p);
  else if (c.op in TSQUERY) sql = textSearch(lhs, c, p);
  else if (c.op in CONTAINMENT)
    sql = `${lhs} ${CONTAINMENT[c.op as keyof typeof CONTAINMENT]} ${p.add(c.value)}::${type}`;
  else if (c.op in PATTERN) {
    const value = c.op === 'like' || c.op === 'ilike' ? LIKE(c.value as string) : c.value;
    sql = `${lhs}::text ${PATTERN[c.op as keyof typeof PATTERN]} ${p.add(value)}`;
  } else if (c.op === 'in') {
    // An array column compares whole arrays: each listed value is an array literal.
    sql = type.endsWith('[]')
      ? `${lhs} in (select x::${type} from unnest(${p.add(c.value)}::text[]) x)`
      : `${lhs} = any(${p.add(c.value)}::${type}[])`;
  } else if (c.op === 'is') sql = `${lhs} is ${IS[(c.value as string).toLowerCase() as keyof typeof IS]}`;
  else if (c.op === 'isdistinct') sql = `${lhs} is distinct from ${p.add(c.value)}::${type}`;
  else sql = `${lhs} ${COMPARE[c.op as keyof typeof COMPARE]} ${p.add(c.value)}::${type}`;
  return c.negate ? `not (${sql})` : sql;
}

function filtersSql(filters: PlanFilter[], alias: string, p: Params): string[] {
  return filters.map((f) => {
    if (f.kind === 'cond') return condition(f, alias, p);
    if (f.kind === 'exists') return `${f.negate ? 'not ' : ''}exists (${matching(f.node, p, '1')})`;
    const inner = filtersSql(f.items, alias, p).join(` ${f.op} `) || 'true';
    return f.negate ? `not (${inner})` : `(${inner})`;
  });
}

/** The filters of `rel` as one condition on `t0` (updates and deletes). */
export function where(rel: Relation, filters: Filter[], p: Params): string {
  return filtersSql(resolveFilters(rel, filters), 't0', p).join(' and ') || 'true';
}

const alias = (n: NodePlan) => `t${n.depth}`;

/** The node's conditions: its link to the parent, its filters, and its `!inner` children existing. */
function conditions(n: NodePlan, p: Params): string[] {
  const t = alias(n);
  const link = (n.link?.pairs ?? []).map(
    ([parent, child]) => `${t}.${ident(child)} = t${n.depth - 1}.${ident(parent)}`,
  );
  const inner = n.fields.flatMap((f) =>
    f.kind === 'embed' && f.node.join === 'inner' && !f.spread
      ? [`exists (${matching(f.node, p, '1')})`]
      : [],
  );
  return [...link, ...filtersSql(n.filters, t, p), ...inner];
}

/** Each spread child of `n`, joined laterally (an inner join for `!inner`). */
function spreadJoins(n: NodePlan, p: Params): string {
  return n.fields
    .flatMap((f, i) => {
      if (f.kind !== 'embed' || !f.spread) return [];
      const kind = f.node.join === 'inner' ? 'join' : 'left join';
      return [` ${kind} lateral (${rowsOf(f.node, p)}) as s${n.depth}_${i} on true`];
    })
    .join('');
}

const fromSql = (n: NodePlan, p: Params) => `public.${ident(n.rel.name)} as ${alias(n)}${spreadJoins(n, p)}`;

function fieldSql(n: NodePlan, f: Field, i: number, p: Params): string {
  const t = alias(n);
  if (f.kind === 'embed') {
    if (f.spread) return `s${n.depth}_${i}.*`;
    const json = f.node.link?.many
      ? `coalesce((select json_agg(x) from (${rowsOf(f.node, p)}) x), '[]'::json)`
      : `(select row_to_json(x) from (${rowsOf(f.node, p)}) x)`;
    return `${json} as ${ident(f.label)}`;
  }
  if (f.kind === 'aggregate') {
    const arg = f.ref ? `${pathSql(f.ref, t, p)}${f.argCast ? `::${f.argCast}` : ''}` : '*';
    return `${f.fn}(${arg})${f.cast ? `::${f.cast}` : ''} as ${ident(f.alias)}`;
  }
  return `${pathSql(f.ref, t, p)}${f.cast ? `::${f.cast}` : ''} as ${ident(f.alias)}`;
}

/** `rel!inner()` filters by a relation and returns nothing of it. */
const shown = (f: Field) => f.kind !== 'embed' || f.spread || f.node.fields.length > 0;

const fieldsSql = (n: NodePlan, p: Params) =>
  // Nothing shown is a row of no columns (`select from …`), which becomes `{}` as JSON.
  n.fields.flatMap((f, i) => (shown(f) ? [fieldSql(n, f, i, p)] : [])).join(', ');

const whereSql = (conds: string[]) => (conds.length ? ` where ${conds.join(' and ')}` : '');

/** Aggregates group by the plain columns beside them, by position (a bound JSON key is never equal to another). */
function groupSql(n: NodePlan): string {
  if (!n.grouped) return '';
  const positions = n.fields.flatMap((f, i) => (f.kind === 'column' ? [i + 1] : []));
  return positions.length ? ` group by ${positions.join(', ')}` : '';
}

// Qualified with the table alias: an output alias of the same name must not change the order.
const orderSql = (n: NodePlan) =>
  n.order.length
    ? ` order by ${n.order.map((o) => `${alias(n)}.${ident(o.column.name)} ${o.descending ? 'desc' : 'asc'}${o.nulls ? ` nulls ${o.nulls}` : ''}`).join(', ')}`
    : '';

/** An embedded node's rows, correlated with its parent, narrowed by its own filters, order and limit. */
function rowsOf(n: NodePlan, p: Params): string {
  const limit = n.limit !== undefined ? ` limit ${p.add(n.limit)}` : '';
  return `select ${fieldsSql(n, p)} from ${fromSql(n, p)}${whereSql(conditions(n, p))}${groupSql(n)}${orderSql(n)}${limit}`;
}

/** Whether a node has a matching row: `!inner` children and `rel=not.is.null` filters. */
function matching(n: NodePlan, p: Params, list: string): string {
  return `select ${list} from ${fromSql(n, p)}${whereSql(conditions(n, p))}`;
}

/**
 * The root's conditions, with the caller's organization first so the planner sees the tenant, and
 * the candidate ids a search view found (read.ts), which RLS and the filters then check again.
 */
function rootConditions(plan: ReadPlan, p: Params, candidates?: string[]): string[] {
  const bound = (v: string) => (p instanceof OpaqueParams ? p.visible(v) : p.add(v));
  const org = plan.organization ? [`t0.organization_id = ${bound(plan.organization)}::uuid`] : [];
  const ids = candidates ? [`t0.id = any(${p.add(candidates)}::uuid[])`] : [];
  return [...org, ...ids, ...conditions(plan.root, p)];
}

/**
 * The ids of at most MAX_CANDIDATES + 1 rows the search view finds for the plan's substring
 * filters, planned with the pattern and without the policies, so its trigram indexes serve it.
 */
/**
 * A substring filter as the search view's test (migrations/0037): its pattern anywhere in the row's
 * search text, which holds every searched column whole and lower-cased. Every row the filter
 * matches passes (`ilike` compares lower-cased text), so the candidates are a superset that the
 * read checks the filter on again. Only filters plan.ts found indexable come here: `like`/`ilike`
 * on a searched column, or an `or` of them.
 */
function searchTextSql(f: PlanFilter, p: Params): string {
  if (f.kind === 'logic') return `(${f.items.map((i) => searchTextSql(i, p)).join(' or ')})`;
  const c = f as PlanCondition;
  return `t0.search_text like lower(${p.add(`%${LIKE(String(c.value))}%`)})`;
}

export function candidatesSql(plan: ReadPlan): Statement {
  const p = new Params();
  const search = plan.search as NonNullable<ReadPlan['search']>;
  const conds = [
    `t0.organization_id = ${p.add(plan.organization)}::uuid`,
    ...search.filters.map((f) => searchTextSql(f, p)),
  ];
  const text = `select coalesce(array_agg(id), '{}') as ids from (select t0.id from ${search.view} as t0 where ${conds.join(' and ')} limit ${MAX_CANDIDATES + 1}) c`;
  return { text, values: p.values };
}

/** What a count reads per row: `1`, or with aggregates the select list its GROUP BY positions name (groups are the rows). */
const counted = (root: NodePlan, p: Params) => (root.grouped ? fieldsSql(root, p) : '1');

/**
 * The page as PostgREST writes CSV: the first row's column names, then each row in PostgreSQL's
 * record text (a value quoted when it holds a comma, quote or space; NULL empty; an embed as its
 * JSON), so the bytes match PostgREST's for the same rows.
 */
const CSV_BODY =
  `(select coalesce(string_agg(h.k, ','), '') from (select json_object_keys(row_to_json(f)) as k from (select * from page limit 1) f) h)` +
  ` || E'\\n' || ${csvLines('page')}`;

/** Rows of a CTE as PostgREST's CSV lines: each record's text without its parentheses, one a line. */
function csvLines(record: string): string {
  return `coalesce(string_agg(substring(${record}::text, 2, length(${record}::text) - 2), E'\\n'), '')`;
}

/** Above this many rows `count=estimated` takes the planner's estimate, as PostgREST does past db-max-rows. */
export const ESTIMATE_ABOVE = 1000;

export type Statement = { text: string; values: unknown[] };

/**
 * One statement: the page as a JSON array (built by Postgres, as PostgREST does), the number of
 * rows in it and, for `count=exact` or `estimated`, the total matching the filters. The page is
 * chosen (filtered, ordered, limited) before any JSON is built.
 */
export function readSql(plan: ReadPlan, candidates?: string[]): Statement {
  const p = new Params();
  const root = plan.root;
  const rows = `select ${fieldsSql(root, p)} from ${fromSql(root, p)}${whereSql(rootConditions(plan, p, candidates))}${groupSql(root)}${orderSql(root)} limit ${p.add(plan.page.limit)} offset ${p.add(plan.page.offset)}`;
  let total = 'null::bigint';
  let own = '';
  if (plan.count === 'exact' || plan.count === 'estimated') {
    const bound = plan.count === 'estimated' ? ` limit ${ESTIMATE_ABOVE + 1}` : '';
    total = `(select count(*) from (select ${counted(root, p)} from ${fromSql(root, p)}${whereSql(rootConditions(plan, p, candidates))}${groupSql(root)}${bound}) c)`;
    // A tenant's estimate starts from its organization's own rows, asked only past the bound.
    if (bound && plan.organization)
      own = `, case when t.total > ${ESTIMATE_ABOVE} then app.own_rows(${p.add(root.rel.name)}) end as own`;
  }
  const body = plan.csv ? CSV_BODY : `coalesce(json_agg(page), '[]')::text`;
  const text = own
    ? `with page as (${rows}), t as (select ${body} as body, count(page.*)::int as returned, ${total} as total from page) select t.*${own} from t`
    : `with page as (${rows}) select ${body} as body, count(page.*)::int as returned, ${total} as total from page`;
  return { text, values: p.values };
}

/** The planner's row estimate for `count=planned` (and `estimated` past ESTIMATE_ABOVE): EXPLAIN of the rows counted. */
export function plannedCountSql(plan: ReadPlan): Statement {
  const p = new Params();
  const root = plan.root;
  const text = `explain (format json) select ${counted(root, p)} from ${fromSql(root, p)}${whereSql(rootConditions(plan, p))}${groupSql(root)}`;
  return { text, values: p.values };
}

/** The rows a plan counts, counted: what `count=exact` adds to the page, on its own. */
export function exactCountSql(plan: ReadPlan): Statement {
  const p = new Params();
  const root = plan.root;
  const text = `select count(*) as total from (select ${counted(root, p)} from ${fromSql(root, p)}${whereSql(rootConditions(plan, p))}${groupSql(root)}) c`;
  return { text, values: p.values };
}

/** Whether a read keeps fewer than all of the organization's rows, or counts groups of them. */
export const filtersRows = (plan: ReadPlan) =>
  plan.root.grouped || conditions(plan.root, new Params()).length > 0;

/**
 * Values the planner cannot see: each is a one-row subquery, which it plans as an unknown value of
 * the column (1/distinct values for `=`, a fixed fraction for a range or a pattern), never by the
 * value's own frequency or place in the table's statistics. Those statistics are of every
 * tenant's rows. Only `visible` values (the caller's own organization) are planned as themselves.
 */
class OpaqueParams extends Params {
  override add(v: unknown): string {
    return `(select ${super.add(v)})`;
  }
  visible(v: unknown): string {
    return super.add(v);
  }
}

/**
 * What a tenant's estimate is made of (read.ts): EXPLAIN of the rows counted, with the caller's
 * own organization visible and every other value opaque, and EXPLAIN of the organization's rows
 * alone. Both run under the caller's RLS, whose own factors cancel in their ratio.
 */
export function tenantEstimateSql(plan: ReadPlan): { rows: Statement; all: Statement } {
  const p = new OpaqueParams();
  const root = plan.root;
  const rows = `explain (format json) select ${counted(root, p)} from ${fromSql(root, p)}${whereSql(rootConditions(plan, p))}${groupSql(root)}`;
  const q = new Params();
  const org = plan.organization ? ` where t0.organization_id = ${q.add(plan.organization)}::uuid` : '';
  const all = `explain (format json) select 1 from public.${ident(root.rel.name)} as t0${org}`;
  return { rows: { text: rows, values: p.values }, all: { text: all, values: q.values } };
}

/**
 * What a write gives back, shaped by `select=` like a read: the statements' rows (`w`, every
 * column the caller may read) read through the plan's fields, embeds and spreads included.
 */
export function returnedSql(plan: NodePlan, p: Params): string {
  return `select ${fieldsSql(plan, p)} from w as t0${spreadJoins(plan, p)}`;
}

/** Column types whose values are text a person typed: the ones a spreadsheet could read as a formula. */
const TEXT_TYPES = new Set(['text', 'character varying', 'character', 'citext', 'name', 'varchar']);

/**
 * A text cell that a spreadsheet would run as a formula (it begins with = + - @, a tab or a
 * carriage return) with an apostrophe before it, as OWASP's "CSV injection" page advises: the
 * spreadsheet shows the text, apostrophe hidden, and runs nothing. Numbers, times, arrays and
 * JSON never begin so, and a negative number stays a number.
 */
export const neutralized = (e: string) => `case when ${e} ~ '^[-=+@\\t\\r]' then '''' || ${e} else ${e} end`;

function exportFieldSql(n: NodePlan, f: Field, i: number, p: Params): string {
  if (f.kind !== 'column') return fieldSql(n, f, i, p);
  const e = `${pathSql(f.ref, alias(n), p)}${f.cast ? `::${f.cast}` : ''}`;
  return `${TEXT_TYPES.has(f.cast ?? f.ref.type) ? neutralized(e) : e} as ${ident(f.alias)}`;
}

/**
 * One batch of an export (rest/export.ts): the plan's rows, in its order and up to its limit, as
 * CSV lines (PostgREST's record text, as `Accept: text/csv` writes them, text cells neutralized),
 * the number of rows and the last row's sort value and id as text, where the next batch starts.
 * Each row's fields are one record (`x`, a lateral subquery over t0), so the keys ride beside
 * it without being part of the line.
 */
export function exportBatchSql(plan: ReadPlan, key: string): Statement {
  const p = new Params();
  const root = plan.root;
  const fields = root.fields.flatMap((f, i) => (shown(f) ? [exportFieldSql(root, f, i, p)] : [])).join(', ');
  const rows = `select x as r, t0.${ident(key)}::text as k, t0.id::text as i from ${fromSql(root, p)} cross join lateral (select ${fields}) as x${whereSql(rootConditions(plan, p))}${orderSql(root)} limit ${p.add(plan.page.limit)}`;
  const text = `with page as (${rows}) select ${csvLines('page.r')} as body, count(*)::int as returned, (array_agg(page.k))[count(*)::int] as k, (array_agg(page.i))[count(*)::int] as i from page`;
  return { text, values: p.values };
}

/** How many rows the plan matches, counted up to `bound` (the export's ceiling) and no further. */
export function boundedCountSql(plan: ReadPlan, bound: number): Statement {
  const p = new Params();
  const root = plan.root;
  const text = `select count(*)::int as total from (select 1 from ${fromSql(root, p)}${whereSql(rootConditions(plan, p))} limit ${p.add(bound)}) c`;
  return { text, values: p.values };
}

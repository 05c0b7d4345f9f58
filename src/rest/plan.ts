import { SEARCH_VIEW } from '../domain/search-candidates.ts';
import {
  aggregateWithEmbed,
  ambiguousEmbed,
  embedFilter,
  embedNotSelected,
  notRelated,
  relationNotFound,
  spreadToMany,
  unknownColumn,
} from './errors.ts';
import type {
  Aggregate,
  Condition,
  EmbeddedQuery,
  Filter,
  OrderTerm,
  ReadQuery,
  SelectItem,
} from './parse.ts';
import type { Prefer } from './prefer.ts';
import type { Column, Relation, SchemaCache } from './schema-cache.ts';

// The second stage of a read: the parsed query resolved against the schema cache into a plain
// plan (no SQL, no HTTP). Every name in it is one the catalog listed; sql.ts renders it.

/** A column, or a JSON path into one (`address->>city`): the type is what the path yields. */
export type ColumnPath = {
  column: Column;
  keys: { arrow: '->' | '->>'; key: string | number }[];
  type: string;
  /** The default output name: the column, or the last key of a path (as PostgREST names it). */
  label: string;
};
export type PlanCondition = Omit<Condition, 'column'> & { ref: ColumnPath };
/** `order_items=not.is.null`: the parent has (or, without `not`, has no) matching children. */
export type PlanExists = { kind: 'exists'; node: NodePlan; negate: boolean };
export type PlanLogic = { kind: 'logic'; op: 'and' | 'or'; negate: boolean; items: PlanFilter[] };
export type PlanFilter = PlanCondition | PlanLogic | PlanExists;
export type PlanOrder = { column: Column; descending: boolean; nulls?: 'first' | 'last' };
/** A foreign key between a node and its parent, as (parent column, child column) pairs. */
export type Link = { pairs: [parent: string, child: string][]; many: boolean };
export type Field =
  | { kind: 'column'; ref: ColumnPath; alias: string; cast?: string }
  | {
      kind: 'aggregate';
      fn: Aggregate;
      ref: ColumnPath | null;
      alias: string;
      cast?: string;
      argCast?: string;
    }
  | { kind: 'embed'; label: string; spread: boolean; node: NodePlan };
/** One relation of the read: the root table, or an embedded one with its link to the parent. */
export type NodePlan = {
  rel: Relation;
  /** t0 for the root, t1… below: unique along a path, so correlated subqueries see their parent. */
  depth: number;
  link: Link | null;
  join: 'left' | 'inner';
  fields: Field[];
  filters: PlanFilter[];
  order: PlanOrder[];
  limit?: number;
  /** An aggregate is selected: the plain columns beside it are the GROUP BY. */
  grouped: boolean;
};
export type ReadPlan = {
  root: NodePlan;
  /**
   * Substring filters a trigram index can serve (see `searchable`), to be asked of the table's
   * search view first: null when there are none.
   */
  search: { view: string; filters: PlanFilter[] } | null;
  page: { limit: number; offset: number };
  count: Prefer['count'];
  /**
   * The caller's organization, bound as an explicit predicate beside row-level security: RLS
   * hides the tenant from the planner, which then estimates every tenant at the table's average.
   */
  organization: string | null;
  /** The page as CSV (Accept: text/csv), not a JSON array. */
  csv: boolean;
};

export function relationOf(schema: SchemaCache, table: string): Relation {
  const rel = schema.get(table);
  if (!rel) throw relationNotFound(table);
  return rel;
}

function column(rel: Relation, name: string): Column {
  const c = rel.columns.get(name);
  if (!c) throw unknownColumn(rel, name);
  return c;
}

/** `address->city->>zip`: keys of digits are array indexes. */
export function columnPath(rel: Relation, ref: string): ColumnPath {
  const [head = '', ...rest] = ref.split(/(->>?)/);
  const col = column(rel, head);
  const keys: ColumnPath['keys'] = [];
  let type = col.type;
  for (let i = 0; i < rest.length; i += 2) {
    const arrow = rest[i] as '->' | '->>';
    const key = rest[i + 1] as string;
    keys.push({ arrow, key: /^\d+$/.test(key) ? Number(key) : key });
    type = arrow === '->>' ? 'text' : 'jsonb';
  }
  return { column: col, keys, type, label: keys.length ? String(keys.at(-1)?.key) : col.name };
}

/** How `child` relates to `parent`, through a foreign key of either; `hint` names the key or a column of it. */
function linkOf(parent: Relation, child: Relation, hint?: string): Link {
  const matches = (fk: { name: string; columns: string[] }) =>
    !hint || fk.name === hint || fk.columns.includes(hint);
  const toOne = parent.fks.filter((fk) => fk.table === child.name && matches(fk));
  const toMany = child.fks.filter((fk) => fk.table === parent.name && matches(fk));
  const links = [
    ...toOne.map((fk) => ({ name: fk.name, link: { many: false, pairs: zip(fk.columns, fk.refColumns) } })),
    ...toMany.map((fk) => ({ name: fk.name, link: { many: true, pairs: zip(fk.refColumns, fk.columns) } })),
  ];
  if (links.length === 0) throw notRelated(parent.name, child.name, hint);
  if (links.length > 1)
    throw ambiguousEmbed(
      parent.name,
      child.name,
      links.map((l) => l.name),
    );
  return (links[0] as { link: Link }).link;
}

const zip = (a: string[], b: string[]) => a.map((x, i) => [x, b[i] as string] as [string, string]);

type Context = { schema: SchemaCache; embedded: Map<string, EmbeddedQuery>; used: Set<string> };

function node(
  ctx: Context,
  rel: Relation,
  select: SelectItem[],
  own: { filters: Filter[]; order: OrderTerm[]; limit?: number },
  depth: number,
  path: string,
  link: Link | null,
  join: 'left' | 'inner',
): NodePlan {
  const embeds = new Map<string, NodePlan>();
  const fields = select.flatMap((item): Field[] => {
    if (item.embed) {
      const child = relationOf(ctx.schema, item.column);
      const l = linkOf(rel, child, item.embed.hint);
      if (item.embed.spread && l.many) throw spreadToMany(rel.name, child.name);
      const label = item.alias ?? item.column;
      const childPath = path ? `${path}.${label}` : label;
      ctx.used.add(childPath);
      const childQuery = ctx.embedded.get(childPath) ?? { filters: [], order: [] };
      const n = node(ctx, child, item.embed.select, childQuery, depth + 1, childPath, l, item.embed.join);
      embeds.set(label, n);
      return [{ kind: 'embed', label, spread: item.embed.spread, node: n }];
    }
    if (item.column === '*' && !item.aggregate)
      return [...rel.columns.values()].map((c) => ({
        kind: 'column',
        ref: columnPath(rel, c.name),
        alias: c.name,
      }));
    if (item.aggregate) {
      const ref = item.column === '*' ? null : columnPath(rel, item.column);
      const { aggregate: fn, cast, argCast } = item;
      return [{ kind: 'aggregate', fn, ref, alias: item.alias ?? fn, cast, argCast }];
    }
    const ref = columnPath(rel, item.column);
    return [{ kind: 'column', ref, alias: item.alias ?? ref.label, cast: item.cast }];
  });
  const aggregated = fields.some((f) => f.kind === 'aggregate');
  if (aggregated && embeds.size) throw aggregateWithEmbed();
  return {
    rel,
    depth,
    link,
    join,
    fields,
    filters: own.filters.map((f) => filter(rel, f, embeds, path)),
    order: own.order.map((o) => ({
      column: column(rel, o.column),
      descending: o.descending,
      nulls: o.nulls,
    })),
    limit: own.limit,
    grouped: aggregated,
  };
}

/** A filter on a column, or on an embedded resource itself (`rel=not.is.null`, as PostgREST 11 allows). */
function filter(rel: Relation, f: Filter, embeds: Map<string, NodePlan>, path: string): PlanFilter {
  if (f.kind === 'logic') return { ...f, items: f.items.map((i) => filter(rel, i, embeds, path)) };
  const embedded = embeds.get(f.column);
  if (embedded && !rel.columns.has(f.column)) {
    if (f.op !== 'is' || String(f.value).toLowerCase() !== 'null')
      throw embedFilter(path ? `${path}.${f.column}` : f.column);
    // `is.null` (no child) is the negation of `not.is.null` (a child exists).
    return { kind: 'exists', node: embedded, negate: !f.negate };
  }
  const { column: _, ...rest } = f;
  return { ...rest, ref: columnPath(rel, f.column) };
}

export function readPlan(
  schema: SchemaCache,
  rel: Relation,
  q: ReadQuery,
  page: ReadPlan['page'],
  count: Prefer['count'],
  organization: string | null,
  csv = false,
): ReadPlan {
  const ctx: Context = { schema, embedded: q.embedded, used: new Set() };
  const root = node(ctx, rel, q.select, q, 0, '', null, 'left');
  for (const path of q.embedded.keys()) if (!ctx.used.has(path)) throw embedNotSelected(path);
  const org = rel.columns.has('organization_id') ? organization : null;
  return { root, page, count, organization: org, search: org ? searchable(rel, root.filters) : null, csv };
}

/**
 * Tables with a search view (migrations/0015, 0037) and the columns its trigram-indexed search text
 * holds: under RLS a tenant's `ilike` cannot use an index, the view's query can.
 */
export const SEARCH_VIEWS: Record<string, { view: string; columns: ReadonlySet<string> }> = {
  contacts: {
    view: SEARCH_VIEW.contacts,
    columns: new Set(['first_name', 'last_name', 'email', 'company', 'phone']),
  },
  orders: {
    view: SEARCH_VIEW.orders,
    columns: new Set([
      'order_number',
      'customer_name',
      'customer_email',
      'customer_phone',
      'shipping_phone_number',
    ]),
  },
  inventory_items: { view: SEARCH_VIEW.inventory_items, columns: new Set(['name', 'sku']) },
};

/**
 * A `like`/`ilike` a trigram index can serve: on an indexed column, not negated, and a pattern with
 * three characters in a row to look up and no backslash (the view's promise: nothing can raise).
 */
function indexable(f: PlanFilter, columns: ReadonlySet<string>): boolean {
  if (f.kind === 'logic')
    return f.op === 'or' && !f.negate && f.items.length > 0 && f.items.every((i) => indexable(i, columns));
  if (f.kind !== 'cond' || f.negate || f.quantifier || f.ref.keys.length) return false;
  if ((f.op !== 'like' && f.op !== 'ilike') || !columns.has(f.ref.column.name)) return false;
  const pattern = String(f.value);
  return !pattern.includes('\\') && /[^*%_]{3}/.test(pattern);
}

function searchable(rel: Relation, filters: PlanFilter[]): ReadPlan['search'] {
  const target = SEARCH_VIEWS[rel.name];
  if (!target) return null;
  const served = filters.filter((f) => indexable(f, target.columns));
  return served.length ? { view: target.view, filters: served } : null;
}

/** Filters of an update or delete: columns of `rel` only. */
export const resolveFilters = (rel: Relation, filters: Filter[]): PlanFilter[] =>
  filters.map((f) => filter(rel, f, new Map(), ''));

/** The shape a write's representation takes: `select=` over the written rows, embeds included. */
export function returningPlan(
  schema: SchemaCache,
  rel: Relation,
  q: Pick<ReadQuery, 'select' | 'embedded'>,
): NodePlan {
  const ctx: Context = { schema, embedded: q.embedded, used: new Set() };
  return node(ctx, rel, q.select, { filters: [], order: [] }, 0, '', null, 'left');
}

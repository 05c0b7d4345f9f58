import { parseError } from './errors.ts';

// The PostgREST query grammar, parsed into plain data. Names are checked against the schema
// cache later (plan.ts); nothing here ever becomes SQL text.

/** The operators PostgREST lets compare against a list with `(any)` / `(all)`. */
const QUANTIFIABLE_OPS = ['eq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch'] as const;
/** Full-text search, each with an optional language: `fts(english)`. */
const TEXT_SEARCH_OPS = ['fts', 'plfts', 'phfts', 'wfts'] as const;
const OTHER_OPS = [
  'neq',
  'in',
  'is',
  'isdistinct',
  'cs',
  'cd',
  'ov',
  'sl',
  'sr',
  'nxl',
  'nxr',
  'adj',
] as const;
export const OPERATORS = [...QUANTIFIABLE_OPS, ...TEXT_SEARCH_OPS, ...OTHER_OPS] as const;
export type Operator = (typeof OPERATORS)[number];
const QUANTIFIABLE: ReadonlySet<Operator> = new Set(QUANTIFIABLE_OPS);
const TEXT_SEARCH: ReadonlySet<Operator> = new Set(TEXT_SEARCH_OPS);

export type Condition = {
  kind: 'cond';
  column: string;
  op: Operator;
  negate: boolean;
  /** `in` gives a list; `(any)`/`(all)` keep the `{a,b}` array literal for Postgres to read. */
  value: string | string[];
  /** `like(any).{a*,b*}`: the value is an array, matched by any or all of its items. */
  quantifier?: 'any' | 'all';
  /** `fts(english).word`: the text search configuration, bound as a value. */
  language?: string;
};
export type Logic = { kind: 'logic'; op: 'and' | 'or'; negate: boolean; items: Filter[] };
export type Filter = Condition | Logic;
export const AGGREGATES = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type Aggregate = (typeof AGGREGATES)[number];
/**
 * A column; an aggregate of one (`total.sum()`, or `count()` over rows, whose column is `*`); or
 * (with `embed`) a related table through a foreign key, named by `column`: `rel!fk!inner(…)`,
 * spread into its parent with `...rel(…)`.
 */
export type SelectItem = {
  column: string;
  alias?: string;
  cast?: string;
  aggregate?: Aggregate;
  /** `amount::int.sum()`: the column's cast, before the aggregate reads it. */
  argCast?: string;
  embed?: { hint?: string; join: 'left' | 'inner'; spread: boolean; select: SelectItem[] };
};
export type OrderTerm = { column: string; descending: boolean; nulls?: 'first' | 'last' };
/** Filters, order and limit of an embedded resource, keyed by its path (`order_items`, `orders.contacts`). */
export type EmbeddedQuery = { filters: Filter[]; order: OrderTerm[]; limit?: number };
export type ReadQuery = {
  select: SelectItem[];
  filters: Filter[];
  order: OrderTerm[];
  limit?: number;
  offset?: number;
  embedded: Map<string, EmbeddedQuery>;
};

const RESERVED = new Set([
  'select',
  'order',
  'limit',
  'offset',
  'or',
  'and',
  'not.or',
  'not.and',
  'columns',
  'on_conflict',
]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A column, optionally followed by a JSON path: `address->city`, `address->>zip`, `items->0`. */
const COLUMN_REF = /^[A-Za-z_][A-Za-z0-9_]*((->>?)([A-Za-z_][A-Za-z0-9_]*|\d+))*$/;
/** Casts a select may ask for: a fixed list, written out in the list's own spelling. */
const CASTS = new Set([
  'text',
  'varchar',
  'int',
  'int2',
  'int4',
  'int8',
  'integer',
  'bigint',
  'smallint',
  'numeric',
  'float4',
  'float8',
  'real',
  'boolean',
  'bool',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'uuid',
  'json',
  'jsonb',
]);

function columnRef(raw: string): string {
  const n = raw.trim();
  if (!COLUMN_REF.test(n)) throw parseError(`"${raw}" is not a valid column name or JSON path`);
  return n;
}

function name(raw: string, what: string): string {
  const n = raw.trim();
  if (!NAME.test(n)) throw parseError(`"${raw}" is not a valid ${what} name`);
  return n;
}

/**
 * Splits on `sep` outside parentheses, braces (array and JSON values: `tags.cs.{a,b}` inside
 * `or=(…)`) and double quotes. Braces are never an error: a lone one is part of a value.
 */
export function splitTop(text: string, sep = ','): string[] {
  const parts: string[] = [];
  let depth = 0;
  let braces = 0;
  let quoted = false;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\\' && quoted && i + 1 < text.length) {
      current += ch + text[++i];
      continue;
    }
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '(') depth++;
    else if (!quoted && ch === ')') depth--;
    else if (!quoted && ch === '{') braces++;
    else if (!quoted && ch === '}') braces = Math.max(0, braces - 1);
    if (depth < 0) throw parseError('Unbalanced parentheses');
    if (ch === sep && depth === 0 && braces === 0 && !quoted) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  if (depth !== 0 || quoted) throw parseError('Unbalanced parentheses or quotes');
  parts.push(current);
  return parts;
}

const unquote = (v: string) =>
  v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1).replace(/\\(.)/g, '$1') : v;

/** `alias:rel!fk!inner(…)` or `...rel(…)`: an embedded resource and how it joins. */
const EMBED = /^(\.\.\.)?(?:([A-Za-z_]\w*):)?([A-Za-z_]\w*)((?:![A-Za-z_]\w*)*)\((.*)\)$/s;
/** `alias:column::cast.sum()::cast` or `count()`. */
const AGGREGATE = new RegExp(
  String.raw`^(?:([A-Za-z_]\w*):)?(?:([^:()]+?)(?:::(\w+))?\.)?(${AGGREGATES.join('|')})\(\)(?:::(\w+))?$`,
);

function cast(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const base = raw.replace(/\[\]$/, '');
  if (!CASTS.has(base)) throw parseError(`"${raw}" is not a cast this interface offers`);
  return `${base}${raw.endsWith('[]') ? '[]' : ''}`;
}

function embedItem(m: RegExpExecArray): SelectItem {
  const [, spread, alias, relation, marks = '', inner = ''] = m;
  let join: 'left' | 'inner' = 'left';
  let hint: string | undefined;
  for (const mark of marks.split('!').slice(1)) {
    if (mark === 'inner' || mark === 'left') join = mark;
    else if (hint === undefined) hint = mark;
    else throw parseError(`"${relation}" names two relationships: !${hint} and !${mark}`);
  }
  if (spread && alias) throw parseError(`"...${relation}" is spread into its parent and takes no alias`);
  return {
    column: relation as string,
    alias,
    // `rel!inner()`: filter by the relation without returning any of it.
    embed: { hint, join, spread: Boolean(spread), select: inner.trim() === '' ? [] : parseSelect(inner) },
  };
}

export function parseSelect(raw: string | undefined): SelectItem[] {
  if (raw === undefined || raw.trim() === '' || raw.trim() === '*') return [{ column: '*' }];
  return splitTop(raw).map((part): SelectItem => {
    const item = part.trim();
    if (item === '*') return { column: '*' };
    // Before embeds: `count()` is the aggregate, not an embedded `count` with no columns.
    const agg = AGGREGATE.exec(item);
    if (agg) {
      const [, alias, column, inner, fn, outer] = agg;
      if (column === undefined && fn !== 'count')
        throw parseError(`"${fn}()" needs a column: column.${fn}()`);
      return {
        column: column === undefined ? '*' : columnRef(column),
        alias: alias === undefined ? undefined : name(alias, 'alias'),
        // As PostgREST: a cast before the function applies to the column, after it to the result.
        cast: cast(outer),
        argCast: cast(inner),
        aggregate: fn as Aggregate,
      };
    }
    const embed = EMBED.exec(item);
    if (embed) return embedItem(embed);
    const casts = item.split('::');
    if (casts.length > 2) throw parseError(`"${item}" has more than one cast`);
    const [head = '', rawCast] = casts;
    const names = head.split(/:(?!:)/);
    if (names.length > 2) throw parseError(`"${item}" has more than one alias`);
    const [alias, column] = names.length === 2 ? names : [undefined, head];
    return {
      column: columnRef(column ?? ''),
      alias: alias === undefined ? undefined : name(alias, 'alias'),
      cast: cast(rawCast),
    };
  });
}

/** `op.value` or `not.op.value`, as in `?age=gte.18` or inside `or=(…)`. */
function parseCondition(column: string, expr: string): Condition {
  let rest = expr;
  let negate = false;
  if (rest.startsWith('not.')) {
    negate = true;
    rest = rest.slice(4);
  }
  // `op`, `op(any)`, `fts(english)`, then `.value`; the language may itself hold a dot.
  const head = /^([a-z]+)(?:\(([^)]*)\))?(?:\.|$)/.exec(rest);
  const op = (head?.[1] ?? rest) as Operator;
  if (!head || !OPERATORS.includes(op))
    throw parseError(`Unknown operator "${head?.[0] ?? rest}" on "${column}"`);
  const value = rest.slice(head[0].length);
  const modifier = head[2];
  if (modifier !== undefined) return modified(columnRef(column), op, negate, modifier, value);
  if (op === 'in') {
    if (!value.startsWith('(') || !value.endsWith(')'))
      throw parseError(`"in" needs a list: ${column}=in.(a,b)`);
    const inner = value.slice(1, -1);
    return {
      kind: 'cond',
      column: columnRef(column),
      op,
      negate,
      value: inner === '' ? [] : splitTop(inner).map((v) => unquote(v.trim())),
    };
  }
  if (op === 'is' && !['null', 'true', 'false', 'unknown'].includes(value.toLowerCase())) {
    throw parseError(`"is" takes null, true, false or unknown, not "${value}"`);
  }
  return { kind: 'cond', column: columnRef(column), op, negate, value: unquote(value) };
}

/** `op(any)`/`op(all)` with a `{a,b}` list, or a text search with its language: `fts(english)`. */
function modified(column: string, op: Operator, negate: boolean, modifier: string, value: string): Condition {
  if (TEXT_SEARCH.has(op)) {
    if (modifier.trim() === '') throw parseError(`"${op}()" needs a language, as in ${op}(english)`);
    return { kind: 'cond', column, op, negate, value: unquote(value), language: modifier.trim() };
  }
  if (!QUANTIFIABLE.has(op) || (modifier !== 'any' && modifier !== 'all'))
    throw parseError(
      `"${op}(${modifier})" is not an operator: (any) and (all) go with eq, gt, gte, lt, lte, like, ilike, match, imatch`,
    );
  if (!value.startsWith('{') || !value.endsWith('}'))
    throw parseError(`"${op}(${modifier})" needs a list in braces: ${column}=${op}(${modifier}).{a,b}`);
  return { kind: 'cond', column, op, negate, value, quantifier: modifier };
}

/** The inside of `or=(…)` / `and=(…)`: conditions `col.op.val` and nested `and(…)`/`or(…)`. */
function parseLogic(op: 'and' | 'or', negate: boolean, raw: string): Logic {
  if (!raw.startsWith('(') || !raw.endsWith(')')) throw parseError(`${op} needs a parenthesised list`);
  const items = splitTop(raw.slice(1, -1)).map((part): Filter => {
    const p = part.trim();
    const nested = /^(not\.)?(and|or)(\(.*\))$/s.exec(p);
    if (nested) return parseLogic(nested[2] as 'and' | 'or', Boolean(nested[1]), nested[3] as string);
    const dot = p.indexOf('.');
    if (dot < 0) throw parseError(`"${p}" is not a condition`);
    return parseCondition(p.slice(0, dot), p.slice(dot + 1));
  });
  return { kind: 'logic', op, negate, items };
}

export function parseOrder(raw: string | undefined): OrderTerm[] {
  if (!raw) return [];
  return splitTop(raw).map((term) => {
    const [column = '', ...mods] = term.trim().split('.');
    const t: OrderTerm = { column: name(column, 'column'), descending: false };
    for (const m of mods) {
      if (m === 'asc' || m === 'desc') t.descending = m === 'desc';
      else if (m === 'nullsfirst' || m === 'nullslast') t.nulls = m === 'nullsfirst' ? 'first' : 'last';
      else throw parseError(`Unknown ordering "${m}" in "${term}"`);
    }
    return t;
  });
}

function nonNegative(raw: string | undefined, what: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,9}$/.test(raw)) throw parseError(`${what} must be a non-negative integer`);
  return Number(raw);
}

/** A read: `select`, filters, `order`, `limit`, `offset`, from the query string. */
export function parseRead(params: URLSearchParams): ReadQuery {
  const filters: Filter[] = [];
  const embedded = new Map<string, EmbeddedQuery>();
  const at = (path: string) => {
    const e = embedded.get(path) ?? { filters: [], order: [] };
    embedded.set(path, e);
    return e;
  };
  for (const [key, value] of params) {
    // `order_items.quantity=gt.1`, `order_items.order=…`, `order_items.limit=2`: an embedded resource's.
    const dotted = /^((?:[A-Za-z_]\w*\.)+)(not\.or|not\.and|or|and|order|limit|[^.]+)$/.exec(key);
    const path = dotted && !key.startsWith('not.') ? (dotted[1] as string).slice(0, -1) : null;
    const last = path ? (dotted?.[2] as string) : key;
    const target = path ? at(path).filters : filters;
    if (path && last === 'order') at(path).order = parseOrder(value);
    else if (path && last === 'limit') at(path).limit = nonNegative(value, 'limit');
    else if (last === 'or' || last === 'and' || last === 'not.or' || last === 'not.and') {
      target.push(parseLogic(last.endsWith('or') ? 'or' : 'and', last.startsWith('not.'), value));
    } else if (path || !RESERVED.has(key)) target.push(parseCondition(last, value));
  }
  return {
    select: parseSelect(params.get('select') ?? undefined),
    filters,
    order: parseOrder(params.get('order') ?? undefined),
    limit: nonNegative(params.get('limit') ?? undefined, 'limit'),
    offset: nonNegative(params.get('offset') ?? undefined, 'offset'),
    embedded,
  };
}

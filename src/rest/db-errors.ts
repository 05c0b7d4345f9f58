import {
  AppError,
  type ErrorDetails,
  fromPgError,
  keyColumns,
  type PgError,
  toAppError,
  typeHint,
} from '../platform/errors.ts';
import { checkSentence, fieldLabel } from '../platform/messages.ts';
import { noUniqueKey } from './errors.ts';
import type { Filter } from './parse.ts';
import type { Relation } from './schema-cache.ts';

/**
 * A database error of a /rest/v1 statement, told in terms of the request: which column, what was
 * wrong with its value, and a hint. PostgreSQL's error carries the column for a NOT NULL and the
 * constraint for a CHECK or unique key, but not the column of a value it could not read; that
 * one is found among the values the request gave (`Supplied`), since the message quotes it.
 * Anything else goes through the shared mapper (`src/platform/errors.ts`) unchanged.
 */

/** The values a request gave, per column: filters' operands and the body's fields. */
export type Supplied = Map<string, unknown[]>;

const add = (into: Supplied, column: string, value: unknown) => {
  const values = into.get(column) ?? [];
  values.push(value);
  into.set(column, values);
};

/**
 * `address->city` filters `address`; `in` gives a list. An embedded resource's filters are
 * named by their path: `order_items.quantity`.
 */
export function fromFilters(
  filters: Filter[],
  into: Supplied = new Map(),
  embedded: Map<string, { filters: Filter[] }> = new Map(),
  prefix = '',
): Supplied {
  for (const f of filters) {
    if (f.kind === 'logic') fromFilters(f.items, into, new Map(), prefix);
    else for (const v of [f.value].flat()) add(into, prefix + (f.column.split(/->>?/)[0] as string), v);
  }
  for (const [path, e] of embedded) fromFilters(e.filters, into, new Map(), `${path}.`);
  return into;
}

export function fromRows(rows: Record<string, unknown>[], into: Supplied = new Map()): Supplied {
  for (const row of rows) for (const [k, v] of Object.entries(row)) add(into, k, v);
  return into;
}

/** The value a data error's message quotes: `…: "x"` or `value "x" is out of range…`. */
const quoted = (message = '') => /: "(.*)"$/.exec(message)?.[1] ?? /^value "(.*?)" is out/.exec(message)?.[1];

const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** The columns whose given value is the one the message quotes (usually exactly one). */
function columnsGiven(supplied: Supplied, value: string | undefined): string[] {
  if (value === undefined) return [];
  return [...supplied].filter(([, vs]) => vs.some((v) => asText(v) === value)).map(([c]) => c);
}

/**
 * `err` as the caller of `rel` should see it, when the request tells more than the error does;
 * anything else is returned as it came, for `restError` (`respond.ts`) to render.
 */
export function explainDbError(err: unknown, rel: Relation, supplied: Supplied): unknown {
  const pg = err as PgError;
  if (DATA_ERRORS.includes(pg?.code ?? '')) {
    const [column] = columnsGiven(supplied, quoted(pg.message));
    if (!column) return err;
    const message = `Column "${column}": ${pg.message}`;
    return withIssue(toAppError(err), pg, column, message, typeHint(rel.columns.get(column)?.type));
  }
  if (pg?.code === '23514') {
    const check = rel.checks.find((k) => k.name === pg.constraint);
    if (!check) return err;
    // The sentence for people from the catalogue (platform/messages.ts); the rule itself, for
    // developers, in the hint.
    const sentence = checkSentence(check.name);
    const column = sentence?.column ?? (check.columns.length === 1 ? (check.columns[0] as string) : '');
    const message =
      sentence?.message ??
      `${column ? `The ${fieldLabel(column)}` : `This ${rel.name.replace(/_/g, ' ')} row`} is not allowed (rule ${check.name})`;
    return withIssue(toAppError(err), pg, column, message, `The rule: ${check.definition}`);
  }
  if (pg?.code === '23505' && !keyColumns(pg.detail).length) {
    // Under row-level security PostgreSQL leaves the key out of DETAIL: the catalog knows it.
    const key = rel.uniques.find((u) => u.name === pg.constraint);
    if (key) {
      const e = fromPgError({ ...pg, detail: `Key (${key.columns.join(', ')})=` });
      return new AppError(e.status, e.code, e.message, e.details, { ...e.extra, code: pg.code }, e.headers);
    }
  }
  return err;
}

/** Values PostgreSQL could not read: its message names the type and quotes the value. */
const DATA_ERRORS = ['22P02', '22007', '22008', '22003', '22001'];

/** The mapped error, now naming `column`, keeping the SQLSTATE as `code` as postgrest-js reads it. */
function withIssue(e: AppError, pg: PgError, column: string, message: string, hint: string) {
  const details: ErrorDetails = { ...e.details, issues: [{ path: column, message }], column };
  return new AppError(e.status, e.code, message, details, { ...e.extra, hint, code: pg.code }, e.headers);
}

/**
 * An upsert's on_conflict must name exactly the columns of one unique key (PostgreSQL answers
 * 42P10 otherwise). Checked before the statement, so the answer can list the keys there are.
 */
export function assertUniqueKey(rel: Relation, target: string[]): void {
  const same = (cols: string[]) => cols.length === target.length && cols.every((c) => target.includes(c));
  if (!rel.uniques.some((u) => same(u.columns))) throw noUniqueKey(rel, target);
}

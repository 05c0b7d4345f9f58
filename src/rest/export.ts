import { claimedOrganization, type Principal } from '../platform/db/database.ts';
import { AppError } from '../platform/errors.ts';
import type { Services } from '../services.ts';
import { explainDbError, fromFilters } from './db-errors.ts';
import { parseError } from './errors.ts';
import { type Filter, parseRead, type ReadQuery } from './parse.ts';
import { type ReadPlan, readPlan, relationOf } from './plan.ts';
import { restError } from './respond.ts';
import { boundedCountSql, exportBatchSql } from './sql.ts';

// Every row a read's filters match, as one CSV file (`GET /functions/v1/export/<table>`, the
// dashboard's "Export CSV"): the same query string /rest/v1 takes, parsed, planned and rendered
// by the same stages, the CSV lines built by PostgreSQL as `Accept: text/csv` builds them. It is
// read in keyset batches of BATCH rows on (sort column, id), each batch its own short read-only
// statement under the caller's own claims (row-level security), so no transaction or connection
// is held while the file travels, and no batch skips rows with an OFFSET. One request, one call
// against the day's quota. docs/decisions.md, "Exporting a list as CSV".

/**
 * The tables an export serves and the columns it may be ordered by: the dashboard's sortable ones,
 * each a range of an index on (organization_id, column, id) (migrations/0011, 0057) under RLS.
 */
export const EXPORT_SORTS: Record<string, readonly string[]> = {
  contacts: ['created_at', 'first_name', 'email'],
  orders: ['created_at', 'order_number'],
};

/** An export holds at most this many rows; more is refused before anything is read (413). */
export const EXPORT_MAX_ROWS = 100_000;
export const BATCH = 1000;

type Sort = { column: string; descending: boolean };
type Cursor = { value: string | null; id: string };

export type CsvExport = {
  filename: string;
  /** How many rows the file holds. */
  rows: number;
  /** The file's text, the header row first. */
  chunks: AsyncGenerator<string, void, undefined>;
};

/** `order=` as an export takes it: one of the table's sort columns, the id after it the same way (or left out). */
function sortOf(order: ReadQuery['order'], allowed: readonly string[]): Sort {
  if (order.length === 0) return { column: 'created_at', descending: true };
  const [first, second] = order;
  const ok =
    first &&
    allowed.includes(first.column) &&
    !first.nulls &&
    order.length <= 2 &&
    (!second || (second.column === 'id' && second.descending === first.descending && !second.nulls));
  if (!ok || !first)
    throw parseError(`An export is ordered by one of ${allowed.join(', ')}, ascending or descending`, {
      issues: [{ path: 'order', message: `one of ${allowed.map((c) => `${c}.asc, ${c}.desc`).join(', ')}` }],
    });
  return { column: first.column, descending: first.descending };
}

const cond = (column: string, op: 'eq' | 'gt' | 'lt' | 'is', value: string, negate = false): Filter => ({
  kind: 'cond',
  column,
  op,
  negate,
  value,
});

/**
 * The reads that continue after `c`, each one range of the index (organization_id, column, id):
 * the rest of the cursor's own value (`column = v and id > c.id`), then the values past it, then
 * (ascending: nulls last) the rows without one; descending, the mirror (nulls first). A page of
 * the dashboard says it in one request as `column >= v and (column > v or id > c.id)`
 * (web/src/lib/keyset.ts), whose `or` is a filter over the rows that share the cursor's value; a
 * batch of an export is not a call against the quota, so it takes the exact ranges, however many
 * rows share a value. Never an `or` holding `is null`: a filter over every row before the cursor.
 */
function segments(sort: Sort, nullable: boolean, c: Cursor | null): Filter[][] {
  const { column, descending } = sort;
  if (!c) return [[]];
  const after = descending ? 'lt' : 'gt';
  const nulls = (id: string | null): Filter[] => [
    cond(column, 'is', 'null'),
    ...(id ? [cond('id', after, id)] : []),
  ];
  if (c.value === null) return descending ? [nulls(c.id), [cond(column, 'is', 'null', true)]] : [nulls(c.id)];
  const values: Filter[][] = [
    [cond(column, 'eq', c.value), cond('id', after, c.id)],
    [cond(column, after, c.value)],
  ];
  return nullable && !descending ? [...values, nulls(null)] : values;
}

/** A header cell: neutralized like the text cells (an alias is chosen by the caller), quoted when it must be. */
function headerCell(name: string): string {
  const safe = /^[-=+@\t\r]/.test(name) ? `'${name}` : name;
  return /[",\n\r\s]/.test(safe) || safe === '' ? `"${safe.replaceAll('"', '""')}"` : safe;
}

function headerOf(plan: ReadPlan): string {
  return plan.root.fields
    .flatMap((f) => {
      if (f.kind === 'embed') return f.node.fields.length > 0 ? [f.label] : [];
      return [f.alias];
    })
    .map(headerCell)
    .join(',');
}

type Batch = { body: string; returned: number; k: string | null; i: string | null };

/**
 * Starts an export: the query checked and planned, the rows counted up to the ceiling, and the
 * first batch read, so that a bad filter or a refused read is an error answer (400, 401, 413),
 * not a broken file. Later batches are read as the file is sent.
 */
export async function exportCsv(
  s: Services,
  principal: Principal,
  table: string,
  search: string,
  today: Date,
): Promise<CsvExport> {
  const allowed = EXPORT_SORTS[table];
  if (!allowed)
    throw new AppError(404, 'not_found', `Only ${Object.keys(EXPORT_SORTS).join(' and ')} can be exported`, {
      table,
    });
  const params = new URLSearchParams(search);
  if (params.has('limit') || params.has('offset'))
    throw parseError('An export holds every matching row: leave out limit and offset', {
      issues: [{ path: params.has('limit') ? 'limit' : 'offset', message: 'not taken by an export' }],
    });
  const query = parseRead(params);
  const sort = sortOf(query.order, allowed);
  const rel = relationOf(s.schema, table);
  const organization = claimedOrganization(principal);
  const nullable = rel.columns.get(sort.column)?.nullable ?? true;
  const order = [
    { column: sort.column, descending: sort.descending },
    { column: 'id', descending: sort.descending },
  ];
  const planOf = (extra: Filter[], limit: number) =>
    readPlan(
      s.schema,
      rel,
      { ...query, order, filters: [...query.filters, ...extra] },
      { limit, offset: 0 },
      null,
      organization,
      true,
    );
  const first = planOf([], BATCH);
  if (first.root.grouped) throw parseError('An export lists rows: aggregates are not taken');
  if (first.root.fields.some((f) => f.kind === 'embed' && f.spread))
    throw parseError('An export writes each embedded resource as one cell: spreads (...) are not taken');

  const run = async <T>(sql: { text: string; values: unknown[] }): Promise<T> => {
    try {
      const [row] = await s.db.queryAs<T & Record<string, unknown>>(principal, sql.text, sql.values, {
        readOnly: true,
      });
      return row as T;
    } catch (err) {
      throw restError(explainDbError(err, rel, fromFilters(query.filters, undefined, query.embedded)), false);
    }
  };
  const { total } = await run<{ total: number }>(boundedCountSql(first, EXPORT_MAX_ROWS + 1));
  if (total > EXPORT_MAX_ROWS)
    throw new AppError(
      413,
      'export_too_large',
      `An export holds at most ${EXPORT_MAX_ROWS.toLocaleString('en')} rows and more than that match: narrow the filters and export in parts`,
      { max_rows: EXPORT_MAX_ROWS },
    );

  /** Up to BATCH rows after `c`, from the segments in turn. */
  const batch = async (c: Cursor | null): Promise<Batch> => {
    const out: Batch = { body: '', returned: 0, k: null, i: null };
    for (const extra of segments(sort, nullable, c)) {
      const b = await run<Batch>(exportBatchSql(planOf(extra, BATCH - out.returned), sort.column));
      if (b.returned === 0) continue;
      out.body = out.body ? `${out.body}\n${b.body}` : b.body;
      out.returned += b.returned;
      [out.k, out.i] = [b.k, b.i];
      if (out.returned >= BATCH) break;
    }
    return out;
  };
  const head = await batch(null);

  async function* chunks(): AsyncGenerator<string, void, undefined> {
    // A byte order mark: Excel reads a CSV file as UTF-8 only with one.
    yield `\uFEFF${headerOf(first)}`;
    let b = head;
    while (b.returned > 0) {
      yield `\n${b.body}`;
      if (b.returned < BATCH) return;
      b = await batch({ value: b.k, id: b.i as string });
    }
  }
  return { filename: `${table}-${today.toISOString().slice(0, 10)}.csv`, rows: total, chunks: chunks() };
}

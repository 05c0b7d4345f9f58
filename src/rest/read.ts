import { MAX_CANDIDATES } from '../domain/search-candidates.ts';
import type { Queryable } from '../platform/db/database.ts';
import type { Services } from '../services.ts';
import { explainDbError, fromFilters } from './db-errors.ts';
import { notSingle, rangeNotSatisfiable } from './errors.ts';
import type { ReadQuery } from './parse.ts';
import { parseRead } from './parse.ts';
import { type ReadPlan, readPlan, relationOf } from './plan.ts';
import { contentRange, pageOf, readStatus } from './range.ts';
import type { ApiRequest } from './request.ts';
import type { RestResponse } from './respond.ts';
import type { Relation } from './schema-cache.ts';
import { type Shape, shapeOf, slotsOf } from './shape.ts';
import {
  candidatesSql,
  ESTIMATE_ABOVE,
  exactCountSql,
  filtersRows,
  plannedCountSql,
  readSql,
  type Statement,
  tenantEstimateSql,
} from './sql.ts';

type Page = { body: string; returned: number; total: number | null };
/** A tenant's estimated read also brings the organization's own rows (readSql, app.own_rows). */
type Row = Page & { own?: string | number | null };

/**
 * Plans and statements of reads by request shape, per relation of the schema cache: a reload
 * replaces every Relation, so a changed catalog never meets a plan made from the old one. Within
 * a relation the key is everything else `readPlan` and `readSql` read: the query string (filters,
 * select, order, limit, offset), the Range header, the count after the role's rule and the
 * caller's organization (bound in the statement) and whether CSV was asked for. Nothing here is a row or a result: the
 * statement still runs under the caller's own claims and RLS on every request. Only plans that
 * were made (no error) are kept; at most STATEMENTS_MAX per relation, the oldest dropped first.
 */
type Prepared = { plan: ReadPlan; sql: Statement | null };
const prepared = new WeakMap<Relation, Map<string, Prepared>>();
const STATEMENTS_MAX = 500;

/**
 * The same by the query's shape (shape.ts): a read of another row of the same shape takes the
 * shape's statement with its own literals bound where the first request's were (`slots`). A shape
 * whose statement is not one text with the literals as bound values (a search, a check that
 * failed) is kept with `slots` null and read by its query string as above.
 */
type Shared = { made: Prepared; slots: number[] | null; page: Page_ };
type Page_ = ReturnType<typeof pageOf>;
const shared = new WeakMap<Relation, Map<string, Shared>>();

function cacheOf<T>(caches: WeakMap<Relation, Map<string, T>>, rel: Relation): Map<string, T> {
  let byKey = caches.get(rel);
  if (!byKey) {
    byKey = new Map();
    caches.set(rel, byKey);
  }
  return byKey;
}

function keep<T>(byKey: Map<string, T>, key: string, value: T): T {
  if (byKey.size >= STATEMENTS_MAX) byKey.delete(byKey.keys().next().value as string);
  byKey.set(key, value);
  return value;
}

function make(
  s: Services,
  req: ApiRequest,
  rel: Relation,
  query: ReadQuery,
  page: ReturnType<typeof pageOf>,
  count: ReadPlan['count'],
): Prepared {
  const plan = readPlan(s.schema, rel, query, page, count, req.organization, req.csv);
  // A search builds its statement inside its transaction (fetchPage).
  return { plan, sql: plan.search ? null : readSql(plan) };
}

// A literal's stand-in when a shape's statement is first made: never a value a request sends.
const marker = (i: number) => `\u0001svc-literal-${i}\u0001`;

/** The shape's statement made once from this request, and where its literals are bound. */
function share(
  s: Services,
  req: ApiRequest,
  rel: Relation,
  shape: Shape,
  page: ReturnType<typeof pageOf>,
  count: ReadPlan['count'],
): Shared {
  const made = make(s, req, rel, req.query, page, count);
  if (!made.sql) return { made, slots: null, page };
  try {
    const query = parseRead(new URLSearchParams(shape.render(marker)));
    const marked = make(s, req, rel, query, page, count).sql;
    return { made, slots: marked && slotsOf(made.sql, marked, shape.literals, marker), page };
  } catch {
    return { made, slots: null, page }; // the stand-ins made it fail: not shared
  }
}

/**
 * The start of the key of most reads (no count, Range or CSV), kept per organization rather than
 * built anew for every request; the same text as the general case's.
 */
const plainBases = new Map<string | null, string>();
function plainBase(organization: string | null): string {
  let base = plainBases.get(organization);
  if (base === undefined) {
    if (plainBases.size >= 10_000) plainBases.clear();
    base = `null\n${organization}\nundefined\nfalse\n`;
    plainBases.set(organization, base);
  }
  return base;
}

/**
 * The plan and statement of a read, and its page. A read whose shape's statement is kept asks
 * nothing of `req.query`, so its query string is never parsed (request.ts): the page is the
 * shape's, whose limit, offset and Range header are part of its key.
 */
function prepare(
  s: Services,
  req: ApiRequest,
  rel: Relation,
  count: ReadPlan['count'],
): Prepared & { page: Page_ } {
  const base =
    count === null && req.range === undefined && !req.csv
      ? plainBase(req.organization)
      : `${count}\n${req.organization}\n${req.range}\n${req.csv}\n`;
  const shape = shapeOf(req.search);
  if (shape) {
    const byShape = cacheOf(shared, rel);
    const key = base + shape.key;
    const hit =
      byShape.get(key) ?? keep(byShape, key, share(s, req, rel, shape, pageOf(req.query, req.range), count));
    const { made, slots, page } = hit;
    if (slots && made.sql) {
      const values = made.sql.values.slice();
      for (let i = 0; i < slots.length; i++) values[slots[i] as number] = shape.literals[i];
      return { plan: made.plan, sql: { text: made.sql.text, values }, page };
    }
  }
  const page = pageOf(req.query, req.range);
  const byQuery = cacheOf(prepared, rel);
  const key = base + req.search;
  return { ...(byQuery.get(key) ?? keep(byQuery, key, make(s, req, rel, req.query, page, count))), page };
}

/** The top node's "Plan Rows" of an EXPLAIN (FORMAT JSON). */
async function planRows(tx: Queryable, sql: Statement): Promise<number> {
  const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(sql.text, sql.values);
  const json = row?.['QUERY PLAN'];
  const doc = (typeof json === 'string' ? JSON.parse(json) : json) as [{ Plan: { 'Plan Rows': number } }];
  return doc[0].Plan['Plan Rows'];
}

/** The rows a plan counts, counted (a tenant's estimate with nothing of its own to start from). */
async function exactCount(tx: Queryable, plan: ReadPlan): Promise<number> {
  const sql = exactCountSql(plan);
  const [row] = await tx.query<{ total: string | number }>(sql.text, sql.values);
  return Number(row?.total ?? 0);
}

/** The planner's estimate of the rows a plan counts, as PostgREST makes it (the service role). */
const planned = async (tx: Queryable, plan: ReadPlan) =>
  Math.round(await planRows(tx, plannedCountSql(plan)));

/**
 * A tenant's estimate past ESTIMATE_ABOVE, built so that other tenants' rows change it no more
 * than missing rows would (docs/decisions.md, "Estimated counts under RLS"): the organization's
 * own rows in the table (`own`: app.own_rows, the kept count or the planner's figure for the
 * organization alone), times the share of them the filters keep as the planner sees them with
 * every value opaque; an unfiltered read keeps them all and asks nothing more. Never above the
 * organization's rows: an estimate shows no more than the tenant could page through. Without a
 * figure of the organization's own (a table without organization_id), the exact count.
 */
async function tenantTotal(
  s: Services,
  req: ApiRequest,
  plan: ReadPlan,
  own: number | null,
): Promise<number> {
  if (own !== null && !filtersRows(plan)) return own;
  return s.db.asPrincipal(
    req.principal,
    async (tx) => {
      if (own === null) return exactCount(tx, plan);
      const sql = tenantEstimateSql(plan);
      const all = await planRows(tx, sql.all);
      return Math.round(own * (all > 0 ? Math.min(1, (await planRows(tx, sql.rows)) / all) : 1));
    },
    { readOnly: true },
  );
}

/**
 * The ids a search view finds for the plan's substring filters, or undefined when they are more
 * than MAX_CANDIDATES: a common pattern is found as fast by reading the page in order.
 */
async function candidates(tx: Queryable, plan: ReadPlan): Promise<string[] | undefined> {
  const sql = candidatesSql(plan);
  const [row] = await tx.query<{ ids: string[] }>(sql.text, sql.values);
  const ids = row?.ids ?? [];
  return ids.length > MAX_CANDIDATES ? undefined : ids;
}

/**
 * The page (and count) under the caller's claims, read-only. The common read is one statement,
 * sent as one implicit transaction (db.queryAs), a tenant's estimated count included up to
 * ESTIMATE_ABOVE rows and, unfiltered, past it; a search (its candidate ids first) or the service
 * role's estimate (EXPLAIN after) takes a transaction of several.
 */
async function fetchPage(s: Services, req: ApiRequest, { plan, sql }: Prepared): Promise<Page> {
  const service = req.principal.kind === 'service';
  const planned_ = plan.count === 'planned' || plan.count === 'estimated';
  let row: Row;
  if (sql && !(service && planned_)) {
    [row] = (await s.db.queryAs<Row>(req.principal, sql.text, sql.values, { readOnly: true })) as [Row];
  } else {
    row = await s.db.asPrincipal(
      req.principal,
      async (tx) => {
        const sql = readSql(plan, plan.search ? await candidates(tx, plan) : undefined);
        const [found] = (await tx.query<Row>(sql.text, sql.values)) as [Row];
        if (service && (plan.count === 'planned' || (plan.count === 'estimated' && past(found))))
          found.total = Math.max(await planned(tx, plan), floor(plan, found));
        return found;
      },
      { readOnly: true },
    );
  }
  const result: Page = { body: row.body, returned: row.returned, total: row.total };
  if (!service && plan.count === 'estimated' && past(result)) {
    const mine = row.own === undefined || row.own === null ? null : Number(row.own);
    result.total = Math.max(await tenantTotal(s, req, plan, mine), floor(plan, result));
  }
  return result;
}

const past = (p: Page) => (p.total ?? 0) > ESTIMATE_ABOVE;
/** An estimate may be below the rows actually seen, or counted: the total never contradicts them. */
const floor = (plan: ReadPlan, p: Page) =>
  Math.max(plan.page.offset + p.returned, past(p) ? ESTIMATE_ABOVE + 1 : 0);

/**
 * GET and HEAD on a table or view. `count=planned` is the planner's estimate and `estimated`
 * counts exactly up to ESTIMATE_ABOVE rows, then estimates, as PostgREST does; under RLS both
 * count up to ESTIMATE_ABOVE and then take the tenant's own estimate (tenantEstimate).
 */
export async function read(s: Services, req: ApiRequest): Promise<RestResponse> {
  // A query string that does not parse is refused before an unknown table, as it always was.
  let rel = s.schema.get(req.table);
  if (!rel) {
    void req.query;
    rel = relationOf(s.schema, req.table);
  }
  const table = rel;
  // Under RLS a planned count is an estimated one: exact up to ESTIMATE_ABOVE rows (a bounded
  // count costs less than being careful with statistics), then the tenant's own estimate.
  const count =
    req.principal.kind !== 'service' && req.prefer.count === 'planned' ? 'estimated' : req.prefer.count;
  const made = prepare(s, req, table, count);
  const page = made.page;
  let fetched: Page;
  try {
    fetched = await fetchPage(s, req, made);
  } catch (err) {
    throw explainDbError(err, table, fromFilters(req.query.filters, undefined, req.query.embedded));
  }
  const { body, returned, total } = fetched;
  const headers = { 'Content-Range': contentRange(page.offset, returned, total) };
  if (req.single) {
    if (returned !== 1) throw notSingle(returned);
    return { status: 200, body: body.slice(1, -1), headers, single: true };
  }
  const status = readStatus(page.offset, returned, total);
  if (status === 416) throw rangeNotSatisfiable(`The offset ${page.offset} is past the ${total} rows`);
  return { status, body, headers, csv: req.csv };
}

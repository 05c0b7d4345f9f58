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
  plannedCountSql,
  readSql,
  SEARCH_CANDIDATES,
  type Statement,
} from './sql.ts';

type Page = { body: string; returned: number; total: number | null };

/**
 * Plans and statements of reads by request shape, per relation of the schema cache: a reload
 * replaces every Relation, so a changed catalog never meets a plan made from the old one. Within
 * a relation the key is everything else `readPlan` and `readSql` read: the query string (filters,
 * select, order, limit, offset), the Range header, the count after the role's rule and the
 * caller's organization (bound in the statement). Nothing here is a row or a result: the
 * statement still runs under the caller's own claims and RLS on every request. Only plans that
 * were made (no error) are kept; at most STATEMENTS_MAX per relation, the oldest dropped first.
 */
type Prepared = { plan: ReadPlan; sql: Statement | null };
const prepared = new WeakMap<Relation, Map<string, Prepared>>();
const STATEMENTS_MAX = 500;

/**
 * The same by the query's shape (shape.ts): a read of another row of the same shape takes the
 * shape's statement with its own literals bound where the first request's were (`slots`). A shape
 * whose statement is not one text with the literals as bound values (a search, an estimated count,
 * a check that failed) is kept with `slots` null and read by its query string as above.
 */
type Shared = { made: Prepared; slots: number[] | null };
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
  const plan = readPlan(s.schema, rel, query, page, count, req.organization);
  const estimated = plan.count === 'planned' || plan.count === 'estimated';
  // A search or an estimate builds its statement inside its transaction (fetchPage).
  return { plan, sql: plan.search || estimated ? null : readSql(plan) };
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
  if (!made.sql) return { made, slots: null };
  try {
    const query = parseRead(new URLSearchParams(shape.render(marker)));
    const marked = make(s, req, rel, query, page, count).sql;
    return { made, slots: marked && slotsOf(made.sql, marked, shape.literals, marker) };
  } catch {
    return { made, slots: null }; // the stand-ins made it fail: not shared
  }
}

function prepare(
  s: Services,
  req: ApiRequest,
  rel: Relation,
  page: ReturnType<typeof pageOf>,
  count: ReadPlan['count'],
): Prepared {
  const base = `${count}\n${req.organization}\n${req.range}\n`;
  const shape = shapeOf(req.search);
  if (shape) {
    const byShape = cacheOf(shared, rel);
    const key = base + shape.key;
    const hit = byShape.get(key) ?? keep(byShape, key, share(s, req, rel, shape, page, count));
    const { made, slots } = hit;
    if (slots && made.sql) {
      const values = [...made.sql.values];
      for (const [i, k] of slots.entries()) values[k] = shape.literals[i];
      return { plan: made.plan, sql: { text: made.sql.text, values } };
    }
  }
  const byQuery = cacheOf(prepared, rel);
  const key = base + req.search;
  return byQuery.get(key) ?? keep(byQuery, key, make(s, req, rel, req.query, page, count));
}

/** The planner's estimate of the rows a plan counts: the top node's "Plan Rows". */
async function planned(tx: Queryable, plan: ReadPlan): Promise<number> {
  const sql = plannedCountSql(plan);
  const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(sql.text, sql.values);
  const json = row?.['QUERY PLAN'];
  const doc = (typeof json === 'string' ? JSON.parse(json) : json) as [{ Plan: { 'Plan Rows': number } }];
  return Math.round(doc[0].Plan['Plan Rows']);
}

/**
 * The ids a search view finds for the plan's substring filters, or undefined when they are more
 * than SEARCH_CANDIDATES: a common pattern is found as fast by reading the page in order.
 */
async function candidates(tx: Queryable, plan: ReadPlan): Promise<string[] | undefined> {
  const sql = candidatesSql(plan);
  const [row] = await tx.query<{ ids: string[] }>(sql.text, sql.values);
  const ids = row?.ids ?? [];
  return ids.length > SEARCH_CANDIDATES ? undefined : ids;
}

/**
 * The page (and count) under the caller's claims, read-only. The common read is one statement,
 * sent as one implicit transaction (db.queryAs); a search (its candidate ids first) or an
 * estimated count (EXPLAIN after) takes a transaction of several.
 */
function fetchPage(s: Services, req: ApiRequest, { plan, sql }: Prepared): Promise<Page> {
  if (sql) {
    return s.db
      .queryAs<Page>(req.principal, sql.text, sql.values, { readOnly: true })
      .then(([row]) => row as Page);
  }
  return s.db.asPrincipal(
    req.principal,
    async (tx) => {
      const sql = readSql(plan, plan.search ? await candidates(tx, plan) : undefined);
      const [row] = await tx.query<Page>(sql.text, sql.values);
      const result = row as Page;
      const estimate =
        plan.count === 'planned' || (plan.count === 'estimated' && (result.total ?? 0) > ESTIMATE_ABOVE);
      // An estimate may be below the rows actually seen; the total never contradicts the page.
      if (estimate) result.total = Math.max(await planned(tx, plan), plan.page.offset + result.returned);
      return result;
    },
    { readOnly: true },
  );
}

/**
 * GET and HEAD on a table or view. For the service role, `count=planned` is the planner's
 * estimate and `estimated` counts exactly up to ESTIMATE_ABOVE rows, then estimates, as PostgREST
 * does; for everyone else both are exact (see below).
 */
export async function read(s: Services, req: ApiRequest): Promise<RestResponse> {
  const rel = relationOf(s.schema, req.table);
  const page = pageOf(req.query, req.range);
  // An estimate comes from statistics of the whole table, other tenants' rows included (a value's
  // frequency, a range's histogram): under RLS, planned and estimated counts are exact counts.
  const count = req.principal.kind === 'service' || req.prefer.count === null ? req.prefer.count : 'exact';
  const { body, returned, total } = await fetchPage(s, req, prepare(s, req, rel, page, count)).catch(
    (err) => {
      throw explainDbError(err, rel, fromFilters(req.query.filters, undefined, req.query.embedded));
    },
  );
  const headers = { 'Content-Range': contentRange(page.offset, returned, total) };
  if (req.single) {
    if (returned !== 1) throw notSingle(returned);
    return { status: 200, body: body.slice(1, -1), headers, single: true };
  }
  const status = readStatus(page.offset, returned, total);
  if (status === 416) throw rangeNotSatisfiable(`The offset ${page.offset} is past the ${total} rows`);
  return { status, body, headers };
}

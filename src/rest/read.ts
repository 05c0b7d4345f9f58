import type { Queryable } from '../platform/db/database.ts';
import type { Services } from '../services.ts';
import { explainDbError, fromFilters } from './db-errors.ts';
import { notSingle, rangeNotSatisfiable } from './errors.ts';
import { type ReadPlan, readPlan, relationOf } from './plan.ts';
import { contentRange, pageOf, readStatus } from './range.ts';
import type { ApiRequest } from './request.ts';
import type { RestResponse } from './respond.ts';
import { candidatesSql, ESTIMATE_ABOVE, plannedCountSql, readSql, SEARCH_CANDIDATES } from './sql.ts';

type Page = { body: string; returned: number; total: number | null };

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
function fetchPage(s: Services, req: ApiRequest, plan: ReadPlan): Promise<Page> {
  const estimated = plan.count === 'planned' || plan.count === 'estimated';
  if (!plan.search && !estimated) {
    const sql = readSql(plan);
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
  const plan = readPlan(s.schema, rel, req.query, page, count, req.organization);
  const { body, returned, total } = await fetchPage(s, req, plan).catch((err) => {
    throw explainDbError(err, rel, fromFilters(req.query.filters, undefined, req.query.embedded));
  });
  const headers = { 'Content-Range': contentRange(page.offset, returned, total) };
  if (req.single) {
    if (returned !== 1) throw notSingle(returned);
    return { status: 200, body: body.slice(1, -1), headers, single: true };
  }
  const status = readStatus(page.offset, returned, total);
  if (status === 416) throw rangeNotSatisfiable(`The offset ${page.offset} is past the ${total} rows`);
  return { status, body, headers };
}

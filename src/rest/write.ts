import { requireScope } from '../domain/agent-keys.ts';
import { withStoredPhones } from '../domain/phone.ts';
import { meterBulk } from '../platform/http/meter.ts';
import type { Services } from '../services.ts';
import { assertUniqueKey, explainDbError, fromFilters, fromRows, type Supplied } from './db-errors.ts';
import { badBody, filterRequired, notSingle, unknownWriteColumn } from './errors.ts';
import { type Filter, splitTop } from './parse.ts';
import { relationOf, returningPlan } from './plan.ts';
import type { ApiRequest } from './request.ts';
import type { RestResponse } from './respond.ts';
import type { Relation } from './schema-cache.ts';
import type { Statement } from './sql.ts';
import { deleteSql, type InsertPlan, insertSql, type Returning, updateSql } from './write-sql.ts';

// POST, PATCH and DELETE: the request checked and planned (write-sql.ts renders the plan), run
// in one transaction under the caller's claims, and answered as PostgREST answers writes. The
// body is read only once the caller may write, so a refusal never depends on what was sent.

type Row = Record<string, unknown>;

function columnsOf(rel: Relation, names: string[]): string[] {
  for (const n of names) if (!rel.columns.has(n)) throw unknownWriteColumn(rel, n);
  return names;
}

function returning(s: Services, rel: Relation, req: ApiRequest): Returning {
  const mode = req.prefer.return;
  return { mode, shape: mode === 'representation' ? returningPlan(s.schema, rel, req.query) : null };
}

/** The caller's organization's country, which reads phone numbers typed in national form. */
const countryOf = (s: Services, req: ApiRequest) => async () => {
  const [row] = await s.db.queryAs<{ country: string | null }>(
    req.principal,
    'select country from public.organizations where id = app.current_org_id()',
    [],
    { readOnly: true },
  );
  return row?.country ?? null;
};

const keysOf = (r: Row) => Object.keys(r).sort().join(',');

/** Where a created row can be read again (Location), from its primary key. */
const location = (rel: Relation, row: Row) =>
  `/${rel.name}?${rel.pk.map((k) => `${k}=eq.${encodeURIComponent(String(row[k]))}`).join('&')}`;

/** Runs a write and answers it; a single object asked for but not written exactly once is undone. */
async function run(
  s: Services,
  req: ApiRequest,
  rel: Relation,
  sql: Statement,
  created: boolean,
  // The values the request supplied, by column: gathered only to explain a refused write.
  supplied: () => Supplied,
): Promise<RestResponse> {
  type Written = { body: string | null; affected: number };
  const single = req.prefer.return === 'representation' && req.single;
  // The write is one statement: without a row count to check, it goes with the claims as one
  // implicit transaction (db.queryAs: one write, one round trip, committed at its Sync or not at
  // all). A single object asked for needs the count checked before the commit.
  const written = single
    ? s.db.asPrincipal(req.principal, async (tx) => {
        const [row] = await tx.query<Written>(sql.text, sql.values);
        const result = row as Written;
        // Thrown inside the transaction, so it rolls back, as PostgREST does.
        if (result.affected !== 1) throw notSingle(result.affected, true);
        return result;
      })
    : s.db.queryAs<Written>(req.principal, sql.text, sql.values).then(([row]) => row as Written);
  const { body, affected } = await written.catch((err) => {
    throw explainDbError(err, rel, supplied());
  });
  const total = req.prefer.count ? String(affected) : '*';
  const headers: Record<string, string> = {
    'Content-Range': affected > 0 ? `0-${affected - 1}/${total}` : `*/${total}`,
  };
  if (req.prefer.return === 'headers-only' && created && affected === 1 && rel.pk.length) {
    headers.Location = location(rel, (JSON.parse(body ?? '[]') as Row[])[0] ?? {});
  }
  if (req.prefer.return !== 'representation') return { status: created ? 201 : 204, body: null, headers };
  return { status: created ? 201 : 200, body: single ? (body ?? '[]').slice(1, -1) : body, headers, single };
}

/** POST: one row or an array, all or nothing; upsert with Prefer resolution and on_conflict. */
export async function insert(
  s: Services,
  req: ApiRequest,
  readBody: () => Promise<unknown>,
): Promise<RestResponse> {
  await requireScope(s, req.principal, 'write');
  const rel = relationOf(s.schema, req.table);
  const body = await readBody();
  const sent = (Array.isArray(body) ? body : [body]) as Row[];
  if (sent.length === 0 || sent.some((r) => typeof r !== 'object' || r === null || Array.isArray(r))) {
    throw badBody('Send a JSON object or a non-empty array of objects');
  }
  const rows = await withStoredPhones(rel.name, sent, countryOf(s, req));
  // As PostgREST: without ?columns every object must carry the same keys, or some would be lost.
  if (!req.columns && rows.some((r) => keysOf(r) !== keysOf(rows[0] as Row))) {
    throw badBody('All object keys must match: give every row the same keys, or list them in ?columns=');
  }
  const columns = columnsOf(
    rel,
    req.columns
      ? splitTop(req.columns).map((n) => n.trim().replace(/^"|"$/g, ''))
      : Object.keys(rows[0] as Row),
  );
  if (columns.length === 0) throw badBody('The row has no columns');
  let conflict: InsertPlan['conflict'] = null;
  if (req.prefer.resolution) {
    const target = columnsOf(rel, req.onConflict?.split(',').map((n) => n.trim()) ?? rel.pk);
    assertUniqueKey(rel, target);
    conflict = { target, ignore: req.prefer.resolution === 'ignore-duplicates' };
  }
  const groups = new Map<string, InsertPlan['groups'][number]>();
  for (const row of rows) {
    const cols = req.prefer.missing === 'default' ? columns.filter((n) => n in row) : columns;
    const g = groups.get(cols.join(',')) ?? { columns: cols, rows: [] };
    g.rows.push(row);
    groups.set(cols.join(','), g);
  }
  const sql = insertSql({ rel, groups: [...groups.values()], conflict, returning: returning(s, rel, req) });
  return run(s, req, rel, sql, true, () => fromRows(rows));
}

/** An update or delete must be filtered; one not addressed to a single id is a bulk operation. */
async function filtersFor(s: Services, req: ApiRequest, verb: 'UPDATE' | 'DELETE'): Promise<Filter[]> {
  const { filters } = req.query;
  if (filters.length === 0) throw filterRequired(verb);
  const [only] = filters;
  const byOneId =
    filters.length === 1 && only?.kind === 'cond' && only.column === 'id' && only.op === 'eq' && !only.negate;
  if (!byOneId) await meterBulk(s, req.principal);
  return filters;
}

export async function update(
  s: Services,
  req: ApiRequest,
  readBody: () => Promise<unknown>,
): Promise<RestResponse> {
  await requireScope(s, req.principal, 'write');
  const rel = relationOf(s.schema, req.table);
  const filters = await filtersFor(s, req, 'UPDATE');
  const body = await readBody();
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badBody('Send the changes as one JSON object');
  const columns = columnsOf(rel, Object.keys(body));
  if (columns.length === 0) throw badBody('Nothing to change');
  const [changes] = await withStoredPhones(rel.name, [body as Row], countryOf(s, req));
  const sql = updateSql({ rel, filters, columns, body: changes as Row, returning: returning(s, rel, req) });
  return run(s, req, rel, sql, false, () => fromFilters(filters, fromRows([changes as Row])));
}

export async function remove(s: Services, req: ApiRequest): Promise<RestResponse> {
  await requireScope(s, req.principal, 'admin');
  const rel = relationOf(s.schema, req.table);
  const filters = await filtersFor(s, req, 'DELETE');
  const sql = deleteSql({ rel, filters, returning: returning(s, rel, req) });
  return run(s, req, rel, sql, false, () => fromFilters(filters));
}

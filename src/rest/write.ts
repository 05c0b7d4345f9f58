import type { Context } from 'hono';
import { requireScope } from '../domain/agent-keys.ts';
import { Params } from '../platform/db/params.ts';
import { AppError } from '../platform/errors.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../platform/http/json-depth.ts';
import { meterBulk } from '../platform/http/meter.ts';
import type { Services } from '../services.ts';
import { assertUniqueKey, explainDbError, fromFilters, fromRows, type Supplied } from './db-errors.ts';
import { type Filter, parseRead, parseSelect, splitTop } from './parse.ts';
import { preferences, relationOf, SINGLE, send } from './respond.ts';
import type { Relation, SchemaCache } from './schema-cache.ts';
import { columnsHint, ident, selectList, where } from './sql.ts';

type Row = Record<string, unknown>;

const badBody = (message: string) =>
  new AppError(
    400,
    'validation_error',
    message,
    { issues: [{ path: '', message }] },
    { code: 'PGRST102', hint: null },
  );

function columnsOf(rel: Relation, names: string[]): string[] {
  for (const n of names) {
    if (!rel.columns.has(n)) {
      throw new AppError(
        400,
        'validation_error',
        `Could not find the "${n}" column of "${rel.name}"`,
        { issues: [{ path: n, message: 'no such column' }] },
        { code: 'PGRST204', hint: columnsHint(rel) },
      );
    }
  }
  return names;
}

async function jsonBody(c: Context): Promise<unknown> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw badBody('The body is not valid JSON');
  }
  const deep = tooDeep(body);
  if (deep !== null) {
    throw badBody(`The body nests JSON more than ${MAX_JSON_DEPTH} levels deep (at ${deep || 'the top'})`);
  }
  return body;
}

/** The representation asked for by `Prefer: return=` and `select=`, as the statement's RETURNING. */
type Mode = 'representation' | 'minimal' | 'headers-only';

/** What `Prefer: return=` asks for, and the RETURNING list that serves it (`select=` shapes it). */
function returning(schema: SchemaCache, rel: Relation, c: Context, params: URLSearchParams, p: Params) {
  const asked = preferences(c.req.header('prefer')).get('return');
  const mode: Mode = asked === 'representation' || asked === 'headers-only' ? asked : 'minimal';
  let list = '1';
  if (mode === 'representation')
    list = selectList(rel, parseSelect(params.get('select') ?? undefined), { schema, p });
  else if (mode === 'headers-only' && rel.pk.length) list = rel.pk.map(ident).join(', ');
  return { mode, list };
}

/** Where a created row can be read again (Location), from its primary key. */
function location(rel: Relation, row: Record<string, unknown>): string {
  return `/${rel.name}?${rel.pk.map((k) => `${k}=eq.${encodeURIComponent(String(row[k]))}`).join('&')}`;
}

async function respond(
  s: Services,
  c: Context,
  rel: Relation,
  statements: string | string[],
  values: unknown[],
  mode: Mode,
  status: 201 | 200,
  supplied: Supplied,
) {
  // Data-modifying statements must sit at the top of the WITH: w0, w1… then their union.
  const parts = Array.isArray(statements) ? statements : [statements];
  const ctes = parts.map((sql, i) => `w${i} as (${sql})`).join(', ');
  const union = parts.map((_, i) => `select * from w${i}`).join(' union all ');
  const single = mode === 'representation' && Boolean(c.req.header('accept')?.includes(SINGLE));
  const [row] = await s.db
    .asPrincipal(c.get('principal'), async (tx) => {
      const rows = await tx.query<{ body: string; affected: number }>(
        `with ${ctes}, w as (${union}) select coalesce(json_agg(w), '[]')::text as body, count(*)::int as affected from w`,
        values,
      );
      // Asked for one object but the write touched another number of rows: undo it, as PostgREST does.
      const n = rows[0]?.affected ?? 0;
      if (single && n !== 1) {
        throw new AppError(
          406,
          'not_acceptable',
          `The write affected ${n} rows; a single object needs exactly one`,
          {},
          {
            code: 'PGRST116',
            hint: null,
          },
        );
      }
      return rows;
    })
    .catch((err) => {
      throw explainDbError(err, rel, supplied);
    });
  const { body, affected } = row as { body: string; affected: number };
  const counted = ['exact', 'planned', 'estimated'].includes(
    preferences(c.req.header('prefer')).get('count') ?? '',
  );
  const total = counted ? String(affected) : '*';
  c.header('Content-Range', affected > 0 ? `0-${affected - 1}/${total}` : `*/${total}`);
  if (mode === 'headers-only' && status === 201 && affected === 1 && rel.pk.length) {
    c.header('Location', location(rel, (JSON.parse(body) as Record<string, unknown>[])[0] ?? {}));
  }
  if (mode !== 'representation') return status === 201 ? send(c, null, 201) : send(c, null, 204);
  if (single) {
    c.header('Content-Type', `${SINGLE}; charset=utf-8`);
    return send(c, body.slice(1, -1), status);
  }
  c.header('Content-Type', 'application/json; charset=utf-8');
  return send(c, body, status);
}

/** POST: one row or an array, all or nothing; upsert with Prefer resolution and on_conflict. */
export async function insert(s: Services, c: Context, table: string) {
  await requireScope(s, c.get('principal'), 'write');
  const rel = relationOf(s.schema, table);
  const params = new URL(c.req.url).searchParams;
  const body = await jsonBody(c);
  const rows = (Array.isArray(body) ? body : [body]) as Row[];
  if (rows.length === 0 || rows.some((r) => typeof r !== 'object' || r === null || Array.isArray(r))) {
    throw badBody('Send a JSON object or a non-empty array of objects');
  }
  const listed = params.get('columns');
  // As PostgREST: without ?columns every object must carry the same keys, or some would be lost.
  const keys = (r: Row) => Object.keys(r).sort().join(',');
  if (!listed && rows.some((r) => keys(r) !== keys(rows[0] as Row))) {
    throw badBody('All object keys must match: give every row the same keys, or list them in ?columns=');
  }
  const columns = columnsOf(
    rel,
    listed ? splitTop(listed).map((n) => n.trim().replace(/^"|"$/g, '')) : Object.keys(rows[0] as Row),
  );
  if (columns.length === 0) throw badBody('The row has no columns');
  const p = new Params();
  const prefer = preferences(c.req.header('prefer'));
  const resolution = prefer.get('resolution');
  const upsert = resolution === 'merge-duplicates' || resolution === 'ignore-duplicates';
  const target = upsert
    ? columnsOf(
        rel,
        params
          .get('on_conflict')
          ?.split(',')
          .map((n) => n.trim()) ?? rel.pk,
      )
    : [];
  if (upsert) assertUniqueKey(rel, target);
  const ret = returning(s.schema, rel, c, params, p);
  const statement = (cols: string[], group: Row[]) => {
    const list = cols.map(ident).join(', ');
    const updates = cols.filter((n) => !target.includes(n)).map((n) => `${ident(n)} = excluded.${ident(n)}`);
    const on = target.map(ident).join(', ');
    const conflict = !upsert
      ? ''
      : resolution === 'ignore-duplicates' || updates.length === 0
        ? ` on conflict (${on}) do nothing`
        : ` on conflict (${on}) do update set ${updates.join(', ')}`;
    return `insert into public.${ident(rel.name)} as t0 (${list})
      select ${list} from json_populate_recordset(null::public.${ident(rel.name)}, ${p.add(JSON.stringify(group))}::json)${conflict}
      returning ${ret.list}`;
  };
  // missing=default: a row that omits a column gets the column's default, not null. Rows are
  // grouped by the columns they carry, one insert each, all in the same statement.
  const groups = new Map<string, { cols: string[]; rows: Row[] }>();
  for (const row of rows) {
    const cols = prefer.get('missing') === 'default' ? columns.filter((n) => n in row) : columns;
    const key = cols.join(',');
    const g = groups.get(key) ?? { cols, rows: [] };
    g.rows.push(row);
    groups.set(key, g);
  }
  const statements = [...groups.values()].map((g) =>
    g.cols.length
      ? statement(g.cols, g.rows)
      : `insert into public.${ident(rel.name)} as t0 default values returning ${ret.list}`,
  );
  return respond(s, c, rel, statements, p.values, ret.mode, 201, fromRows(rows));
}

/** An update or delete must be filtered; one not addressed to a single id is a bulk operation. */
async function filtersFor(s: Services, c: Context, params: URLSearchParams): Promise<Filter[]> {
  const { filters } = parseRead(params);
  if (filters.length === 0) {
    throw new AppError(
      400,
      'validation_error',
      'Add a filter: an update or delete without one would touch every row',
      {},
      {
        code: 'PGRST106',
        hint: 'Filter by id, e.g. ?id=eq.<uuid>',
      },
    );
  }
  const byOneId =
    filters.length === 1 &&
    filters[0]?.kind === 'cond' &&
    filters[0].column === 'id' &&
    filters[0].op === 'eq' &&
    !filters[0].negate;
  if (!byOneId) await meterBulk(s, c.get('principal'));
  return filters;
}

export async function update(s: Services, c: Context, table: string) {
  await requireScope(s, c.get('principal'), 'write');
  const rel = relationOf(s.schema, table);
  const params = new URL(c.req.url).searchParams;
  const filters = await filtersFor(s, c, params);
  const body = await jsonBody(c);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw badBody('Send the changes as one JSON object');
  const columns = columnsOf(rel, Object.keys(body));
  if (columns.length === 0) throw badBody('Nothing to change');
  const p = new Params();
  const data = p.add(JSON.stringify(body));
  const ret = returning(s.schema, rel, c, params, p);
  const cols = columns.map(ident).join(', ');
  const sql = `update public.${ident(rel.name)} as t0 set (${cols}) = (select ${cols} from json_populate_record(null::public.${ident(rel.name)}, ${data}::json))
    where ${where(rel, filters, p)} returning ${ret.list}`;
  return respond(s, c, rel, sql, p.values, ret.mode, 200, fromFilters(filters, fromRows([body as Row])));
}

export async function remove(s: Services, c: Context, table: string) {
  await requireScope(s, c.get('principal'), 'admin');
  const rel = relationOf(s.schema, table);
  const params = new URL(c.req.url).searchParams;
  const filters = await filtersFor(s, c, params);
  const p = new Params();
  const ret = returning(s.schema, rel, c, params, p);
  const sql = `delete from public.${ident(rel.name)} as t0 where ${where(rel, filters, p)} returning ${ret.list}`;
  return respond(s, c, rel, sql, p.values, ret.mode, 200, fromFilters(filters));
}

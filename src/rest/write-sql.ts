import { Params } from '../platform/db/params.ts';
import type { Filter } from './parse.ts';
import type { NodePlan } from './plan.ts';
import type { Prefer } from './prefer.ts';
import type { Relation } from './schema-cache.ts';
import { ident, returnedSql, type Statement, where } from './sql.ts';

// Writes as plans and their SQL, pure like sql.ts: (plan) → {text, values}. Each write is one
// statement: the data-modifying parts at the top of a WITH, then what the caller asked to get back.

type Row = Record<string, unknown>;

/** What comes back: the rows shaped by `select=` (representation), their keys (headers-only), or a count. */
export type Returning = { mode: Prefer['return']; shape: NodePlan | null };

export type InsertPlan = {
  rel: Relation;
  /** Rows grouped by the columns they carry (missing=default leaves a row's absent keys to their defaults). */
  groups: { columns: string[]; rows: Row[] }[];
  /** Upsert: the unique key, and whether a duplicate is skipped or merged. */
  conflict: { target: string[]; ignore: boolean } | null;
  returning: Returning;
};
export type UpdatePlan = {
  rel: Relation;
  filters: Filter[];
  columns: string[];
  body: Row;
  returning: Returning;
};
export type DeletePlan = { rel: Relation; filters: Filter[]; returning: Returning };

const table = (rel: Relation) => `public.${ident(rel.name)}`;
/** Every column the caller may read, so `select=` can shape the written rows afterwards. */
const allColumns = (rel: Relation) => [...rel.columns.keys()].map((c) => `t0.${ident(c)}`).join(', ');

/** `w0, w1…` (the data-modifying statements), `w` their rows, then the body and the count. */
function finish(statements: string[], rel: Relation, returning: Returning, p: Params): Statement {
  const ctes = statements.map((sql, i) => `w${i} as (${sql} returning ${allColumns(rel)})`);
  const union = statements.map((_, i) => `select * from w${i}`).join(' union all ');
  let body = 'null::text';
  if (returning.mode === 'representation' && returning.shape)
    body = `(select coalesce(json_agg(r), '[]')::text from (${returnedSql(returning.shape, p)}) r)`;
  else if (returning.mode === 'headers-only' && rel.pk.length)
    body = `(select coalesce(json_agg(r), '[]')::text from (select ${rel.pk.map(ident).join(', ')} from w) r)`;
  return {
    text: `with ${ctes.join(', ')}, w as (${union}) select ${body} as body, (select count(*)::int from w) as affected`,
    values: p.values,
  };
}

/**
 * Insert texts by shape, per relation (a schema reload replaces every Relation, so a changed
 * catalog never meets a text made from the old one). An insert's text depends only on its
 * columns, its conflict clause and what it returns, and its rows go as one bound JSON value: the
 * same shape gets the same string again, which the statement cache (statement-cache.ts) finds
 * without hashing a new text of a kilobyte or more. A representation (`select=`) may bind values
 * of its own, and several column groups make several statements: those are built every time.
 */
const insertTexts = new WeakMap<Relation, Map<string, string>>();
const INSERT_SHAPES_MAX = 200;

export function insertSql(plan: InsertPlan): Statement {
  const [only] = plan.groups;
  if (plan.groups.length !== 1 || !only || plan.returning.mode === 'representation') return buildInsert(plan);
  const { conflict } = plan;
  const key = `${only.columns.map(ident).join(',')}\n${conflict ? `${conflict.target.map(ident).join(',')} ${conflict.ignore}` : ''}\n${plan.returning.mode}`;
  let byShape = insertTexts.get(plan.rel);
  if (!byShape) {
    byShape = new Map();
    insertTexts.set(plan.rel, byShape);
  }
  const text = byShape.get(key);
  if (text !== undefined) return { text, values: [JSON.stringify(only.rows)] };
  const built = buildInsert(plan);
  if (built.values.length === 1) {
    if (byShape.size >= INSERT_SHAPES_MAX) byShape.delete(byShape.keys().next().value as string);
    byShape.set(key, built.text);
  }
  return built;
}

function buildInsert(plan: InsertPlan): Statement {
  const p = new Params();
  const { rel, conflict } = plan;
  const statements = plan.groups.map(({ columns, rows }) => {
    if (columns.length === 0) return `insert into ${table(rel)} as t0 default values`;
    const list = columns.map(ident).join(', ');
    let onConflict = '';
    if (conflict) {
      const updates = columns
        .filter((n) => !conflict.target.includes(n))
        .map((n) => `${ident(n)} = excluded.${ident(n)}`);
      const on = conflict.target.map(ident).join(', ');
      onConflict =
        conflict.ignore || updates.length === 0
          ? ` on conflict (${on}) do nothing`
          : ` on conflict (${on}) do update set ${updates.join(', ')}`;
    }
    return `insert into ${table(rel)} as t0 (${list})
      select ${list} from json_populate_recordset(null::${table(rel)}, ${p.add(JSON.stringify(rows))}::json)${onConflict}`;
  });
  return finish(statements, rel, plan.returning, p);
}

export function updateSql(plan: UpdatePlan): Statement {
  const p = new Params();
  const { rel } = plan;
  const data = p.add(JSON.stringify(plan.body));
  const cols = plan.columns.map(ident).join(', ');
  const sql = `update ${table(rel)} as t0 set (${cols}) = (select ${cols} from json_populate_record(null::${table(rel)}, ${data}::json))
    where ${where(rel, plan.filters, p)}`;
  return finish([sql], rel, plan.returning, p);
}

export function deleteSql(plan: DeletePlan): Statement {
  const p = new Params();
  return finish(
    [`delete from ${table(plan.rel)} as t0 where ${where(plan.rel, plan.filters, p)}`],
    plan.rel,
    plan.returning,
    p,
  );
}

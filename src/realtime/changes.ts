import type { Database, Principal } from '../platform/db/database.ts';
import type { Relation } from '../rest/schema-cache.ts';
import { type Filter, filterSql } from './filter.ts';

/**
 * A committed change as migrations/0046 announces it (the row's keys, never the row), and what a
 * subscriber sees of it: the row read again under that subscriber's own claims (row-level
 * security decides), with each of its filters applied by the database in the same statement.
 */

export type Op = 'INSERT' | 'UPDATE' | 'DELETE';
export type Change = { table: string; op: Op; org: string; id: string; at: string };

/** A `postgres_changes` binding of a joined channel; `id` is what the client matches on. */
export type Subscription = {
  id: number;
  event: '*' | Op;
  table: string;
  filter: Filter | null;
};

const OPS = new Set(['INSERT', 'UPDATE', 'DELETE']);

/** A change notice's fields, checked; null when one is missing or malformed. */
export function parseChange(c: Record<string, unknown>): Change | null {
  const { table, op, org, id, at } = c;
  if (typeof table !== 'string' || typeof op !== 'string' || !OPS.has(op)) return null;
  if (typeof org !== 'string' || typeof id !== 'string' || typeof at !== 'string') return null;
  return { table, op: op as Op, org, id, at };
}

export const wants = (s: Subscription, c: Change) =>
  s.table === c.table && (s.event === '*' || s.event === c.op);

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
const PK = new Set(['organization_id', 'id']);

/**
 * Which of one principal's subscriptions the change reaches, and the row they are sent (null
 * for a delete, whose row is gone: only its keys are sent, as Supabase does without REPLICA
 * IDENTITY FULL). An insert or update reaches nobody whose claims cannot read the row now; a
 * delete reaches only those who may still read that organization's rows.
 */
export async function readFor(
  db: Database,
  principal: Principal,
  rel: Relation,
  change: Change,
  subs: Subscription[],
): Promise<{ row: Record<string, unknown> | null; reached: Subscription[] }> {
  if (change.op === 'DELETE') {
    if (!(await mayRead(db, principal, change.org))) return { row: null, reached: [] };
    // A filter on another column cannot be told from the keys: the delete is sent (as Supabase).
    const keys: Record<string, string> = { organization_id: change.org, id: change.id };
    const reached = subs.filter(
      (s) => !s.filter || !PK.has(s.filter.column) || matchesKey(s.filter, keys[s.filter.column] ?? ''),
    );
    return { row: null, reached };
  }
  const cols = [...rel.columns.keys()].map((c) => `t.${ident(c)}`).join(', ');
  const params: unknown[] = [change.org, change.id];
  const tests = subs.map((s) => {
    if (!s.filter) return 'true';
    const sql = filterSql(s.filter, rel.columns.get(s.filter.column)?.type ?? 'text', params.length + 1);
    params.push(sql.value);
    return `coalesce(${sql.text}, false)`;
  });
  const rows = await db.queryAs<{ row: Record<string, unknown>; m: boolean[] }>(
    principal,
    `select (select to_jsonb(c) from (select ${cols}) c) as "row", array[${tests.join(', ')}] as m
       from public.${ident(rel.name)} t where t.organization_id = $1::uuid and t.id = $2::uuid`,
    params,
    { readOnly: true },
  );
  const found = rows[0];
  if (!found) return { row: null, reached: [] };
  return { row: found.row, reached: subs.filter((_, i) => found.m[i] === true) };
}

/** Whether `principal`'s claims may read `org`'s rows now (a member, an agent with a read scope). */
export async function mayRead(db: Database, principal: Principal, org: string): Promise<boolean> {
  const [r] = await db.queryAs<{ may: boolean }>(
    principal,
    `select coalesce(app.current_org_id() = $1::uuid and app.can_read(), false) as may`,
    [org],
    { readOnly: true },
  );
  return r?.may === true;
}

/** A filter on a key column, against the deleted row's key (uuids: compared as text). */
function matchesKey(f: Filter, value: string): boolean {
  const v = value.toLowerCase();
  if (f.op === 'in') return (f.value as string[]).some((x) => x.toLowerCase() === v);
  if (f.op === 'eq') return (f.value as string).toLowerCase() === v;
  if (f.op === 'neq') return (f.value as string).toLowerCase() !== v;
  return true;
}

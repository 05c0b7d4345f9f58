import type { Database } from '../platform/db/database.ts';
import type { SchemaCache } from '../rest/schema-cache.ts';
import type { Subscription } from './changes.ts';
import { parseFilter } from './filter.ts';
import { offered } from './tables.ts';

/**
 * The `postgres_changes` bindings of a `phx_join` (`config.postgres_changes`), checked against
 * what /rest/v1 serves: schema `public`, a table realtime offers (tables.ts), an event of INSERT,
 * UPDATE, DELETE or *, a filter on one of the table's columns whose value the column's type
 * reads. Each gets an id of this process, which the join's reply and every change carry.
 */

/** What the join's reply lists: each binding as the client sent it, with its id. */
export type Bound = { id: number; event: string; schema: string; table: string; filter?: string };

const EVENTS = new Set(['*', 'INSERT', 'UPDATE', 'DELETE']);
let nextId = 1;

export async function bindChanges(
  deps: { db: Database; schema: SchemaCache; tables: Set<string> },
  raw: unknown,
): Promise<{ subs: Subscription[]; bound: Bound[] } | string> {
  if (raw === undefined || raw === null) return { subs: [], bound: [] };
  if (!Array.isArray(raw)) return 'config.postgres_changes must be a list';
  if (raw.length > 100) return 'A channel takes at most 100 postgres_changes bindings';
  const subs: Subscription[] = [];
  const bound: Bound[] = [];
  for (const b of raw as Record<string, unknown>[]) {
    const event = typeof b?.event === 'string' ? b.event.toUpperCase() : '';
    const { schema, table, filter } = b ?? {};
    if (!EVENTS.has(event)) return `The event "${String(b?.event)}" is not INSERT, UPDATE, DELETE or *`;
    if (schema !== 'public') return 'Changes are offered for schema "public" only';
    const rel = typeof table === 'string' ? offered(deps.tables, deps.schema, table) : null;
    if (!rel) return `Changes of "${String(table)}" are not offered (docs/realtime.md lists the tables)`;
    const text = typeof filter === 'string' ? filter : '';
    const parsed = parseFilter(text, new Set(rel.columns.keys()));
    if (typeof parsed === 'string') return parsed;
    if (parsed) {
      const type = rel.columns.get(parsed.column)?.type as string;
      const values = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
      // A value the column's type cannot read is refused now, not at every change.
      const ok = await deps.db
        .query(`select $1::text[]::${type.endsWith('[]') ? 'text' : type}[] as v`, [values])
        .then(
          () => true,
          () => false,
        );
      if (!ok) return `The filter's value is not a ${type}: "${values.join(',')}"`;
    }
    const id = nextId++;
    subs.push({ id, event: event as Subscription['event'], table: rel.name, filter: parsed });
    bound.push({
      id,
      event: b.event as string,
      schema: 'public',
      table: rel.name,
      ...(typeof filter === 'string' ? { filter } : {}),
    });
  }
  return { subs, bound };
}

import type { Database } from '../platform/db/database.ts';
import type { Relation, SchemaCache } from '../rest/schema-cache.ts';

/**
 * The tables realtime subscribers may name: those carrying the `realtime_notice` trigger
 * (migrations/0046_realtime_notices.sql) that /rest/v1 serves. Read once at start; the columns
 * come from the REST schema cache at each join, so a migration's new column is offered at once.
 */
export async function realtimeTables(db: Database): Promise<Set<string>> {
  const rows = await db.query<{ name: string }>(
    `select c.relname::text as name from pg_trigger g join pg_class c on c.oid = g.tgrelid
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and g.tgname = 'realtime_notice'`,
  );
  return new Set(rows.map((r) => r.name));
}

/** The relation a subscription names, or null when realtime does not offer it. */
export function offered(tables: Set<string>, schema: SchemaCache, name: string): Relation | null {
  const rel = schema.get(name);
  return rel && rel.kind === 'table' && tables.has(name) ? rel : null;
}

// The catalog's type names (format_type) as Supabase Realtime names column types (pg_type's
// typname), which realtime-js reads to convert values (its transformers).
const TYPNAME: Record<string, string> = {
  integer: 'int4',
  bigint: 'int8',
  smallint: 'int2',
  boolean: 'bool',
  real: 'float4',
  'double precision': 'float8',
  'timestamp with time zone': 'timestamptz',
  'timestamp without time zone': 'timestamp',
  'time with time zone': 'timetz',
  'time without time zone': 'time',
  'character varying': 'varchar',
  character: 'bpchar',
};

export function typname(formatType: string): string {
  if (formatType.endsWith('[]')) return `_${typname(formatType.slice(0, -2))}`;
  return TYPNAME[formatType] ?? formatType;
}

/** A relation's `columns` as a change message carries them: `[{name, type}]`. */
export const changeColumns = (rel: Relation) =>
  [...rel.columns.values()].map((c) => ({ name: c.name, type: typname(c.type) }));

import type { Database } from '../platform/db/database.ts';

/** `type` is the catalog's name without length or precision, so a cast never truncates a value. */
export type Column = { name: string; type: string; nullable: boolean };
export type ForeignKey = { name: string; columns: string[]; table: string; refColumns: string[] };
export type Relation = {
  name: string;
  kind: 'table' | 'view';
  columns: Map<string, Column>;
  pk: string[];
  fks: ForeignKey[];
};
export type SchemaCache = Map<string, Relation>;

/**
 * What /rest/v1 serves, read from the catalog: every table and view of `public` on which the
 * `authenticated` role may select at least one column, with the columns it may select and the
 * foreign keys. Identifiers in a request are looked up here, never passed through, so a name
 * the catalog does not list can never reach SQL.
 */
export async function loadSchemaCache(db: Database): Promise<SchemaCache> {
  const relations = await db.query<{ name: string; kind: string; pk: string[] | null }>(
    `select c.relname as name, case c.relkind when 'v' then 'view' else 'table' end as kind,
            (select array_agg(a.attname::text order by k.ord)
               from pg_index i cross join lateral unnest(i.indkey) with ordinality k(attnum, ord)
               join pg_attribute a on a.attrelid = c.oid and a.attnum = k.attnum
              where i.indrelid = c.oid and i.indisprimary) as pk
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'v', 'p')
        and has_any_column_privilege('authenticated', c.oid, 'select')`,
  );
  const columns = await db.query<{ rel: string; name: string; type: string; nullable: boolean }>(
    `select c.relname::text as rel, a.attname::text as name, format_type(a.atttypid, null) as type, not a.attnotnull as nullable
       from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and a.attnum > 0 and not a.attisdropped
        and has_column_privilege('authenticated', c.oid, a.attnum, 'select')
      order by c.relname, a.attnum`,
  );
  const fks = await db.query<{ name: string; rel: string; cols: string[]; ref: string; refcols: string[] }>(
    `select con.conname as name, c.relname as rel, r.relname as ref,
            array(select a.attname::text from unnest(con.conkey) with ordinality k(n, o)
                    join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n order by k.o) as cols,
            array(select a.attname::text from unnest(con.confkey) with ordinality k(n, o)
                    join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.n order by k.o) as refcols
       from pg_constraint con join pg_class c on c.oid = con.conrelid join pg_class r on r.oid = con.confrelid
       join pg_namespace n on n.oid = c.relnamespace
      where con.contype = 'f' and n.nspname = 'public'`,
  );
  const cache: SchemaCache = new Map();
  for (const r of relations) {
    cache.set(r.name, {
      name: r.name,
      kind: r.kind as Relation['kind'],
      columns: new Map(),
      pk: r.pk ?? [],
      fks: [],
    });
  }
  for (const c of columns)
    cache.get(c.rel)?.columns.set(c.name, { name: c.name, type: c.type, nullable: c.nullable });
  for (const f of fks) {
    if (cache.has(f.ref))
      cache.get(f.rel)?.fks.push({ name: f.name, columns: f.cols, table: f.ref, refColumns: f.refcols });
  }
  return cache;
}

/** Refills `cache` in place, so every holder of it sees the new catalog. */
export async function reloadSchemaCache(db: Database, cache: SchemaCache): Promise<void> {
  const fresh = await loadSchemaCache(db);
  cache.clear();
  for (const [k, v] of fresh) cache.set(k, v);
}

import type { Database } from '../platform/db/database.ts';

/** `type` is the catalog's name without length or precision, so a cast never truncates a value. */
export type Column = { name: string; type: string; nullable: boolean };
export type ForeignKey = { name: string; columns: string[]; table: string; refColumns: string[] };
/** A unique index or constraint an ON CONFLICT can name: whole columns, no predicate. */
export type UniqueKey = { name: string; columns: string[] };
/** A CHECK constraint, with its rule as the catalog prints it (`CHECK (…)`). */
export type Check = { name: string; columns: string[]; definition: string };
export type Relation = {
  name: string;
  kind: 'table' | 'view';
  columns: Map<string, Column>;
  pk: string[];
  fks: ForeignKey[];
  uniques: UniqueKey[];
  checks: Check[];
};
export type SchemaCache = Map<string, Relation>;

/**
 * What /rest/v1 serves, read from the catalog: every table and view of `public` on which the
 * `authenticated` role may select at least one column, with the columns it may select and the
 * foreign keys, unique keys and checks (which errors name). Identifiers in a request are looked up here, never passed through, so a name
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
  // Partial and expression indexes are left out: an on_conflict list of columns cannot name them.
  const uniques = await db.query<{ name: string; rel: string; cols: string[] }>(
    `select i.relname as name, c.relname as rel,
            array(select a.attname::text from unnest(x.indkey) with ordinality k(n, o)
                    join pg_attribute a on a.attrelid = c.oid and a.attnum = k.n order by k.o) as cols
       from pg_index x join pg_class c on c.oid = x.indrelid join pg_class i on i.oid = x.indexrelid
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and x.indisunique and x.indpred is null and x.indexprs is null
      order by x.indisprimary desc, i.relname`,
  );
  const checks = await db.query<{ name: string; rel: string; cols: string[]; def: string }>(
    `select con.conname as name, c.relname as rel, pg_get_constraintdef(con.oid) as def,
            array(select a.attname::text from unnest(con.conkey) k(n)
                    join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n) as cols
       from pg_constraint con join pg_class c on c.oid = con.conrelid join pg_namespace n on n.oid = c.relnamespace
      where con.contype = 'c' and n.nspname = 'public'`,
  );
  const cache: SchemaCache = new Map();
  for (const r of relations) {
    cache.set(r.name, {
      name: r.name,
      kind: r.kind as Relation['kind'],
      columns: new Map(),
      pk: r.pk ?? [],
      fks: [],
      uniques: [],
      checks: [],
    });
  }
  for (const c of columns)
    cache.get(c.rel)?.columns.set(c.name, { name: c.name, type: c.type, nullable: c.nullable });
  for (const f of fks) {
    if (cache.has(f.ref))
      cache.get(f.rel)?.fks.push({ name: f.name, columns: f.cols, table: f.ref, refColumns: f.refcols });
  }
  // Only keys and rules over columns the interface serves: the others are not the caller's to know.
  const visible = (rel: string, cols: string[]) => cols.every((c) => cache.get(rel)?.columns.has(c));
  for (const u of uniques) {
    if (visible(u.rel, u.cols)) cache.get(u.rel)?.uniques.push({ name: u.name, columns: u.cols });
  }
  for (const k of checks) {
    if (visible(k.rel, k.cols))
      cache.get(k.rel)?.checks.push({ name: k.name, columns: k.cols, definition: k.def });
  }
  return cache;
}

/** Refills `cache` in place, so every holder of it sees the new catalog. */
export async function reloadSchemaCache(db: Database, cache: SchemaCache): Promise<void> {
  const fresh = await loadSchemaCache(db);
  cache.clear();
  for (const [k, v] of fresh) cache.set(k, v);
}

/**
 * The cache, read from the catalog in the background: the service starts answering (/health,
 * /auth/v1, …) while the catalog queries run, some 130 ms of the engine's time even when warm
 * (docs/performance.md, issue 29). `pending()` is undefined once the cache is filled; before, it
 * is the load (the first call starts it), which a /rest/v1 request waits for (rest/server.ts). A
 * load that failed is tried again by the next call (its failure is that request's 5xx).
 */
export function schemaCacheLoader(db: Database): {
  cache: SchemaCache;
  pending(): Promise<void> | undefined;
} {
  const cache: SchemaCache = new Map();
  // Each of its statements after the requests already waiting: PGlite answers a statement without
  // going back to the event loop, so a chain of them would otherwise hold every request that
  // arrives meanwhile (a /health right after the start) until the last.
  const queries: Database = {
    ...db,
    query: (sql, params) => new Promise((resolve) => setImmediate(resolve)).then(() => db.query(sql, params)),
  };
  let loading: Promise<void> | undefined;
  let filled = false;
  const pending = () => {
    if (filled) return undefined;
    loading ??= reloadSchemaCache(queries, cache).then(
      () => {
        filled = true;
      },
      (err) => {
        loading = undefined;
        throw err;
      },
    );
    return loading;
  };
  return { cache, pending };
}

import { mkdirSync } from 'node:fs';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import {
  type Connection,
  claimsParams,
  type Database,
  type Queryable,
  type Row,
  SET_CLAIMS_SQL,
} from './database.ts';

/**
 * PGlite serializes a bound value by the parameter's type in JavaScript, and for a boolean it
 * throws a plain Error ("Invalid input for boolean type", no SQLSTATE) on text it does not know,
 * so `is_active=eq.maybe` became a 500 here and a 400 22P02 on PostgreSQL. Sent as text, as
 * node-postgres does, the value is parsed by PostgreSQL itself and fails with the same error.
 */
const BOOL_OID = 16;
const serializers = {
  [BOOL_OID]: (v: unknown) => (typeof v === 'boolean' ? (v ? 't' : 'f') : String(v)),
};

const wrap = (q: PGlite | Transaction): Connection => ({
  async query<T extends Row>(sql: string, params?: unknown[]) {
    return (await q.query<T>(sql, params)).rows;
  },
  async exec(script: string) {
    await q.exec(script);
  },
});

/**
 * The embedded engine: real Postgres compiled to WASM, in this process. `dataDir` undefined means
 * in memory (tests). PGlite has one connection, so transactions are serialized by PGlite itself.
 */
export async function openPglite(
  dataDir: string | undefined,
  template?: Blob,
): Promise<Database & { snapshot(): Promise<Blob> }> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // Extensions the migrations create must be bundled at open: PGlite cannot load one later from
  // disk the way a PostgreSQL server loads its contrib package (0012 creates pg_trgm).
  const db = await PGlite.create({ dataDir, loadDataDir: template, serializers, extensions: { pg_trgm } });
  let lockQueue: Promise<unknown> = Promise.resolve();

  function inTransaction<T>(prelude: [string, unknown[]] | null, fn: (tx: Queryable) => Promise<T>) {
    return db.transaction(async (tx) => {
      if (prelude) await tx.query(prelude[0], prelude[1]);
      return fn(wrap(tx));
    });
  }

  return {
    engine: 'pglite',
    query: (sql, params) => wrap(db).query(sql, params),
    script: async <T extends Row>(sql: string) => (await db.exec(sql)).flatMap((r) => r.rows as T[]),
    transaction: (fn) => inTransaction(null, fn),
    asPrincipal: (principal, fn, opts) =>
      inTransaction([SET_CLAIMS_SQL, claimsParams(principal, opts?.readOnly)], fn),
    // In process there is no round trip to save: the same transaction as asPrincipal.
    queryAs: (principal, sql, params, opts) =>
      inTransaction([SET_CLAIMS_SQL, claimsParams(principal, opts?.readOnly)], (tx) => tx.query(sql, params)),
    // One process owns a PGlite data dir, so an in-process queue is the whole lock.
    withAdvisoryLock: (_key, fn) => {
      const run = lockQueue.then(() => fn(wrap(db)));
      lockQueue = run.catch(() => {});
      return run;
    },
    async listen(channel, onNotify) {
      return db.listen(channel, onNotify);
    },
    close: () => db.close(),
    // A copy of a migrated database lets tests start many instances without migrating each.
    snapshot: () => db.dumpDataDir('none'),
  };
}

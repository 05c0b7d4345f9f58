import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import {
  type Connection,
  claimsStatement,
  type Database,
  type Principal,
  perClaims,
  type Queryable,
  type Row,
} from './database.ts';
import { bindOf, runOneSync, runTransaction, type Statement } from './pglite-one-sync.ts';
import { pgliteModule } from './pglite-wasm.ts';

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

/**
 * The claims statement of a principal with its Bind message, kept per token: a verified token's
 * claims are one object that arrives with every request it makes (platform/jwt.ts), and writing its
 * values into a Bind was, on a cached read, about a tenth of this engine's time per request
 * (docs/performance.md): PGlite's encoder measures and copies the claims JSON character by
 * character. Only the bytes are kept; the statement still runs on every request.
 */
const claimsOf = perClaims((principal, readOnly): Statement => {
  const s = claimsStatement(principal, readOnly);
  return { ...s, bind: bindOf(s) };
});

const wrap = (q: PGlite): Connection => ({
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
  const db = await PGlite.create({
    dataDir,
    loadDataDir: template,
    serializers,
    extensions: { pg_trgm },
    pgliteWasmModule: await pgliteModule(),
  });
  let lockQueue: Promise<unknown> = Promise.resolve();

  // Each statement one call into the engine (pglite-one-sync.ts), `begin` and the claims together.
  function inTransaction<T>(prelude: Statement | null, fn: (tx: Queryable) => Promise<T>) {
    return runTransaction(db, prelude, (query) =>
      fn({ query: <R extends Row>(sql: string, params?: unknown[]) => query(sql, params) as Promise<R[]> }),
    );
  }

  return {
    engine: 'pglite',
    // `prepare` is for PostgreSQL's planning per statement; PGlite's query parses each time.
    query: (sql, params) => wrap(db).query(sql, params),
    script: async <T extends Row>(sql: string) => (await db.exec(sql)).flatMap((r) => r.rows as T[]),
    transaction: (fn) => inTransaction(null, fn),
    asPrincipal: (principal, fn, opts) => inTransaction(claimsOf(principal, opts?.readOnly), fn),
    // The claims and the statement in one call into the engine (pglite-one-sync.ts).
    queryAs: async <T extends Row>(
      principal: Principal,
      sql: string,
      params?: unknown[],
      opts?: { readOnly?: boolean },
    ) => {
      const [, rows] = await runOneSync(
        db,
        [claimsOf(principal, opts?.readOnly), { text: sql, values: params ?? [] }],
        opts,
      );
      return (rows ?? []) as T[];
    },
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
    // Under the transaction lock (every statement here takes it: pglite-one-sync.ts), so no
    // transaction is open in the copy. The checkpoint just before (it takes the lock itself, which
    // is not reentrant) leaves little for the restored database to replay at its first start.
    async dumpDataDir() {
      await db.exec('checkpoint');
      return db._runExclusiveTransaction(() => db.dumpDataDir('none'));
    },
    // A copy of a migrated database lets tests start many instances without migrating each.
    snapshot: () => db.dumpDataDir('none'),
  };
}

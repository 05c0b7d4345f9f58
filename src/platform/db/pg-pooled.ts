import pg from 'pg';
import { claimsStatement, type Database, perClaims, type Queryable, type Row } from './database.ts';
import { advisoryKey } from './lock-key.ts';
import { runOneSync, UnnamedOneSync } from './one-sync.ts';
import { listenWithReconnect, poolStats, resilientPool, runScript, types, wrap } from './pg.ts';

/**
 * How often a process without a LISTEN connection acts as if a notice had come (transaction
 * mode without DATABASE_DIRECT_URL): what it does when a LISTEN connection comes back after a
 * loss, since notices sent meanwhile are gone. The schema cache is reloaded that often; a revoked
 * agent key is refused within AGENT_KEY_RECHECK_SECONDS anyway.
 */
export const UNHEARD_NOTICE_MS = 30_000;

// The claims statement, as in pg.ts but unnamed: a pooler in transaction mode hands each
// transaction whichever server connection is free, where a name prepared on another is unknown.
const unnamedClaims = perClaims((principal, readOnly) => {
  const { text, values } = claimsStatement(principal, readOnly);
  return { text, values };
});

/**
 * A transaction's statements one after another: callers may issue several without waiting
 * (adapters.ts), which a connection that does not pipeline would otherwise queue itself, a use
 * node-postgres deprecates.
 */
function inTurn(client: pg.ClientBase): Queryable {
  let last: Promise<unknown> = Promise.resolve();
  return {
    query<T extends Row>(sql: string, params?: unknown[]) {
      const next = last.then(() => client.query(sql, params as unknown[])).then((r) => r.rows as T[]);
      last = next.catch(() => {});
      return next;
    },
  };
}

/**
 * PostgreSQL behind a pooler in transaction mode (PgBouncer, Supavisor; DATABASE_POOL_MODE):
 * nothing may outlive a transaction, because the next one may run on another server connection.
 * So, unlike pg.ts: every statement is unnamed (parsed and planned on each run: PgBouncer before
 * 1.21 cannot carry named ones), connections do not pipeline (a pooler must keep a client's server
 * connection until its last outstanding Sync is answered; not relied on: docs/decisions.md), there are
 * no shared read lanes, the migration lock is held by a transaction instead of a session, and
 * LISTEN goes to `directUrl`, a connection that bypasses the pooler, or is replaced by acting as
 * if a notice came every UNHEARD_NOTICE_MS. Chosen once at open time (open.ts): the session-mode
 * path in pg.ts is untouched.
 */
export function openPostgresPooled(
  url: string,
  poolSize: number,
  directUrl?: string,
  unheardNoticeMs = UNHEARD_NOTICE_MS,
): Database {
  const pool = resilientPool({ connectionString: url, types, max: poolSize } as pg.PoolConfig);

  /** A transaction on one pooled connection; `prelude` runs first (the caller's claims). */
  async function inTransaction<T>(
    prelude: { text: string; values: unknown[] } | null,
    fn: (tx: Queryable) => Promise<T>,
  ): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('begin');
      if (prelude) await client.query(prelude);
      const result = await fn(inTurn(client));
      await client.query('commit');
      return result;
    } catch (err) {
      // A connection that cannot even roll back (a lost socket) is not returned to the pool.
      await client.query('rollback').catch((rollbackFailed: Error) => {
        broken = rollbackFailed;
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  return {
    engine: 'postgres',
    // `prepare` asks for a named statement, which a transaction-mode pooler cannot keep: unnamed.
    query: <T extends Row>(sql: string, params?: unknown[]) => wrap(pool).query<T>(sql, params),
    // Without pipelining, the pool's connections run the simple protocol's scripts themselves.
    script: (sql) => runScript(pool, sql),
    transaction: (fn) => inTransaction(null, fn),
    asPrincipal: (principal, fn, opts) => inTransaction(unnamedClaims(principal, opts?.readOnly), fn),
    async queryAs(principal, sql, params, opts) {
      const claims = unnamedClaims(principal, opts?.readOnly);
      const batch = new UnnamedOneSync([
        { name: '', ...claims },
        { name: '', text: sql, values: params },
      ]);
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        const results = await runOneSync(client, batch);
        return (results[1]?.rows ?? []) as never[];
      } catch (err) {
        if (!(err instanceof pg.DatabaseError)) broken = err as Error;
        throw err;
      } finally {
        client.release(broken);
      }
    },
    /**
     * A session's advisory lock would stay on whichever server connection the pooler gave it, and
     * outlive this process's hold of it. Instead one connection holds a transaction with the
     * transaction-level lock open while `fn` runs on another (migrations: a transaction each);
     * a second process waits at the lock until the holder ends.
     */
    async withAdvisoryLock(key, fn) {
      const holder = new pg.Client({ connectionString: url, types });
      const worker = new pg.Client({ connectionString: url, types });
      for (const c of [holder, worker]) c.on('error', () => {}); // a pending query fails instead
      try {
        await holder.connect();
        await holder.query('begin');
        await holder.query('select pg_advisory_xact_lock($1)', [advisoryKey(key)]);
        await worker.connect();
        return await fn(wrap(worker));
      } finally {
        await holder.query('commit').catch(() => {});
        await Promise.all([holder.end().catch(() => {}), worker.end().catch(() => {})]);
      }
    },
    async listen(channel, onNotify) {
      if (directUrl) return listenWithReconnect(directUrl, channel, onNotify);
      const timer = setInterval(() => onNotify(), unheardNoticeMs);
      timer.unref();
      return async () => clearInterval(timer);
    },
    async close() {
      await pool.end();
    },
    // No shared read lanes behind a transaction-mode pooler: every read takes a pooled connection.
    stats: () => ({ pool: poolStats(pool, poolSize), lanes: { max: 0, open: 0, inFlight: 0 } }),
  };
}

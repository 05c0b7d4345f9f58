import type { Database, Queryable, Row } from '../db/database.ts';

/** What pg-boss calls to reach the database (its `db` option and `send(…, {db})`). */
export type SqlExecutor = { executeSql(text: string, values?: unknown[]): Promise<{ rows: Row[] }> };

/**
 * The queue's own statements, on the service's database: one engine-neutral path for PGlite (one
 * connection in this process) and PostgreSQL (the pool). Statements without values may be several
 * in one text (pg-boss's locked blocks and its fetch), so they go through `script`.
 */
export function databaseExecutor(db: Database): SqlExecutor {
  return {
    async executeSql(text, values) {
      return { rows: values?.length ? await db.query(text, values) : await db.script(text) };
    },
  };
}

/**
 * The caller's transaction, for an enqueue. A request's transaction runs as `authenticated` (or
 * `anon`), and the job table is machinery no tenant role may touch: the insert runs as the owner
 * (`reset role`, allowed because the session user is the owner) and the caller's role comes back
 * right after, still transaction-local, so the rest of the transaction is as row-level-secure as
 * before. The claims stay set throughout.
 */
export function transactionExecutor(tx: Queryable): SqlExecutor {
  return {
    async executeSql(text, values) {
      const [row] = await tx.query<{ role: string }>(`select current_setting('role') as role`);
      const role = row?.role ?? 'none';
      if (role === 'none') return { rows: await tx.query(text, values) };
      await tx.query('reset role');
      // No finally: after a failed insert the transaction is aborted and only a rollback helps.
      const rows = await tx.query(text, values);
      await tx.query(`select set_config('role', $1, true)`, [role]);
      return { rows };
    },
  };
}

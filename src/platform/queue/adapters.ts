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
      if (values?.length) return { rows: await db.query(text, values) };
      return { rows: await db.script(FETCH.test(text) ? `${IN_ORDER}${text}` : text) };
    },
  };
}

/**
 * pg-boss's fetch of due jobs (`WITH next AS (… ORDER BY … LIMIT n FOR UPDATE SKIP LOCKED)`). Its
 * partial index (job_i11: name, priority, created_on) hands the due jobs in the order asked, so a
 * fetch reads its batch and stops; but after a burst of enqueues, before autovacuum has analyzed
 * the table, the planner still thinks a queue holds a couple of rows and reads every due job
 * through a bitmap and sorts them all (6,600 of them, 8.9 ms a fetch in bench:webhooks' drain).
 * With sorting priced out for that one statement (`set local` in the script's own implicit
 * transaction), it walks the index whatever the statistics say.
 */
const FETCH = /WITH\s+next AS/;
const IN_ORDER = 'set local enable_sort = off;\n';

/**
 * The caller's transaction, for an enqueue. A request's transaction runs as `authenticated` (or
 * `anon`), and the job table is machinery no tenant role may touch: the insert runs as the owner
 * (`reset role`, allowed because the session user is the owner) and the caller's role comes back
 * right after, still transaction-local, so the rest of the transaction is as row-level-secure as
 * before. The claims stay set throughout.
 *
 * The four statements are issued without waiting for one another (the role kept in a
 * transaction-local setting, not read back into this process): on a pipelining connection they
 * leave in one write and cost one round trip instead of four; PGlite runs them in the order given.
 * When the insert fails the statements after it fail too (the transaction is aborted): the
 * insert's own error is the one thrown.
 */
export function transactionExecutor(tx: Queryable): SqlExecutor {
  return {
    async executeSql(text, values) {
      const steps = [
        tx.query(`select set_config('svc.enqueue_role', current_setting('role'), true)`),
        tx.query('reset role'),
        tx.query(text, values),
        tx.query(`select set_config('role', current_setting('svc.enqueue_role'), true)`),
      ];
      for (const step of steps) step.catch(() => {}); // awaited in order below
      for (const step of steps.slice(0, 2)) await step;
      const rows = await (steps[2] as Promise<Row[]>);
      await steps[3];
      return { rows };
    },
  };
}

/**
 * A transaction that already has owner privileges (`db.transaction`), for an enqueue: the insert
 * is issued as it is, one statement instead of the four above. Used inside a tenant's transaction
 * by mistake, the insert fails (no tenant role may write the job table); it never runs as anyone else.
 */
export function ownerTransactionExecutor(tx: Queryable): SqlExecutor {
  return {
    async executeSql(text, values) {
      return { rows: await tx.query(text, values) };
    },
  };
}

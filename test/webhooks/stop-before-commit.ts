import type { Database, Row } from '../../src/platform/db/database.ts';

// A database whose transactions stop just before their commit, as a worker killed at that moment
// leaves them: everything the run wrote (the message, the unread count, the event marked
// processed) sits in its open transaction, nothing is committed, and the run never reports back
// to the queue. Only a lease running out can bring the job back.
//
// - `hang` (a real kill, PostgreSQL): the transaction stays open until the process is SIGKILLed;
//   the server rolls it back when the connection drops.
// - `rollback` (the simulation, PGlite): one process and one connection, so a "dead" run cannot
//   keep its transaction open without blocking every other statement. It rolls back (what the
//   crash leaves in the database), the run then never returns, and every later statement of this
//   database fails (what the queue sees of a dead worker: a job taken and never settled; its own
//   queue, which would give the run up at its lease, can record nothing, as a dead one makes no
//   statements).

const NEVER = new Promise<never>(() => {});

/**
 * `watch`: the table whose transactions stop (a statement naming it marks the transaction):
 * app.webhook_events for an event's processing, app.webhook_inbox for the inbox router's batch.
 */
export function stopBeforeCommit(
  db: Database,
  how: 'hang' | 'rollback',
  reached: () => void,
  watch = 'app.webhook_events',
): Database {
  const stop = Symbol('stopped before commit');
  let dead = false;
  const alive = () => {
    if (dead) throw new Error('this worker is dead');
  };
  return {
    ...db,
    async query(sql, params) {
      alive();
      return db.query(sql, params);
    },
    async script(sql) {
      alive();
      return db.script(sql);
    },
    async transaction(fn) {
      alive();
      // Only the watched transactions stop (a webhook event's processing by default): the
      // worker's other transactions (scheduling the daily purge at start, say) commit as usual.
      let processing = false;
      try {
        return await db.transaction(async (tx) => {
          const watched = {
            query: <T extends Row>(sql: string, params?: unknown[]) => {
              if (sql.includes(watch)) processing = true;
              return tx.query<T>(sql, params);
            },
          };
          const result = await fn(watched);
          if (!processing) return result;
          reached();
          if (how === 'hang') await NEVER;
          dead = true;
          throw stop;
        });
      } catch (err) {
        if (err !== stop) throw err;
      }
      return NEVER;
    },
  };
}

import type { Database } from '../../src/platform/db/database.ts';

// A database whose transactions stop just before their commit, as a worker killed at that moment
// leaves them: everything the run wrote (the message, the unread count, the event marked
// processed) sits in its open transaction, nothing is committed, and the run never reports back
// to the queue. Only a lease running out can bring the job back.
//
// - `hang` (a real kill, PostgreSQL): the transaction stays open until the process is SIGKILLed;
//   the server rolls it back when the connection drops.
// - `rollback` (the simulation, PGlite): one process and one connection, so a "dead" run cannot
//   keep its transaction open without blocking every other statement. It rolls back (what the
//   crash leaves in the database) and the run then never returns (what the queue sees of a dead
//   worker: a job taken and never settled).

const NEVER = new Promise<never>(() => {});

export function stopBeforeCommit(db: Database, how: 'hang' | 'rollback', reached: () => void): Database {
  const stop = Symbol('stopped before commit');
  return {
    ...db,
    async transaction(fn) {
      try {
        await db.transaction(async (tx) => {
          await fn(tx);
          reached();
          if (how === 'hang') await NEVER;
          throw stop;
        });
      } catch (err) {
        if (err !== stop) throw err;
      }
      return NEVER;
    },
  };
}

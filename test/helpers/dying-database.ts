import type { Database } from '../../src/platform/db/database.ts';

// A database as one worker process sees it, so that a test can end that "process" while its run
// is in flight, also in this process (PGlite cannot be shared with a child process). After
// `kill()` every statement fails, as a dead process makes none: its queue can neither settle the
// run it held (so only the run's lease running out, or a crash it recorded first, brings the job
// back) nor take another job. `stopAt`: the first statement it matches never returns and kills
// the database then, as a process killed just as it sent that statement; `onStop` hears of it.

const NEVER = new Promise<never>(() => {});

export function dyingDatabase(
  db: Database,
  { stopAt, onStop }: { stopAt?: (sql: string, params?: unknown[]) => boolean; onStop?: () => void } = {},
) {
  let dead = false;
  const alive = () => {
    if (dead) throw new Error('this worker is dead');
  };
  const kill = () => {
    dead = true;
  };
  const wrapped: Database = {
    ...db,
    async query(sql, params) {
      alive();
      if (stopAt?.(sql, params)) {
        kill();
        onStop?.();
        return NEVER;
      }
      return db.query(sql, params);
    },
    async script(sql) {
      alive();
      return db.script(sql);
    },
    async transaction(fn) {
      alive();
      return db.transaction(fn);
    },
    async asPrincipal(principal, fn, opts) {
      alive();
      return db.asPrincipal(principal, fn, opts);
    },
    async queryAs(principal, sql, params, opts) {
      alive();
      return db.queryAs(principal, sql, params, opts);
    },
    // The service closes its own database; a dead worker's is not closed twice.
    close: async () => {},
  };
  return { db: wrapped, kill };
}

/** The statement with which a send claims its message before calling Meta (src/jobs/send-message.ts). */
export const isClaim = (sql: string) => sql.includes('set sending_until = now() + make_interval');

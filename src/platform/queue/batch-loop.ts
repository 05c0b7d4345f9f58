import { databaseUnavailable } from '../db/unavailable.ts';
import type { Logger } from '../log.ts';

// A loop that drains a table in batches (the webhook inbox's router, src/jobs/route-webhook-inbox.ts):
// one batch at a time in this process; woken in-process (`wake`, by the code that just committed a
// row) or at least every `pollMs` (rows committed by other processes); again at once while a batch
// comes back full or a wake came in during it, so a burst drains at the batches' own speed and
// many wakes during one batch cost one more batch, not one each.

export type BatchLoop = {
  /** Runs a batch now, or right after the one in hand. Cheap: call it on every commit. */
  wake(): void;
  /**
   * No more batches; resolves once the one in hand has ended, or after `timeoutMs` (its
   * transaction is then cut when the database closes, and rolls back: its rows stay for later).
   */
  stop(timeoutMs?: number): Promise<void>;
};

export function batchLoop(opts: {
  /** One batch: how many rows it took. Throws to be logged and tried again at the next poll. */
  run: () => Promise<number>;
  /** The most a batch takes: a batch this full may have left rows behind. */
  batch: number;
  pollMs: number;
  log: Logger;
  /** What the log calls the loop. */
  what: string;
}): BatchLoop {
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  async function drain() {
    try {
      do {
        again = false;
        const taken = await opts.run();
        if (taken >= opts.batch) again = true;
      } while (again && !stopped);
    } catch (err) {
      // Tried again at the next poll (a database away fails every batch alike: a warning).
      const line = { err: { message: (err as Error).message } };
      if (databaseUnavailable(err)) opts.log.warn(line, `${opts.what}: database unavailable`);
      else opts.log.error(line, `${opts.what} failed`);
    } finally {
      running = undefined;
    }
  }
  const wake = () => {
    if (stopped) return;
    if (running) again = true;
    else running = drain();
  };
  const timer = setInterval(wake, opts.pollMs);
  timer.unref();
  wake();
  return {
    wake,
    async stop(timeoutMs = 10_000) {
      stopped = true;
      clearInterval(timer);
      let late: NodeJS.Timeout | undefined;
      await Promise.race([running, new Promise((r) => (late = setTimeout(r, timeoutMs)))]);
      clearTimeout(late);
    },
  };
}

/**
 * How a writer wakes a loop of the same process without knowing whether one runs: `wake` calls
 * whatever `listen` was given (the inline worker's loop), and nothing when none was (WORKER=off).
 */
export type WakeSignal = { wake(): void; listen(fn: () => void): void };

export function wakeSignal(): WakeSignal {
  let listener: (() => void) | undefined;
  return {
    wake: () => listener?.(),
    listen(fn) {
      listener = fn;
    },
  };
}

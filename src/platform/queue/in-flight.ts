import { AsyncLocalStorage } from 'node:async_hooks';
import type { Run } from './expired-leases.ts';

// The runs in flight in this process, and which of them the code running now belongs to (its
// async context, which timers and callbacks started by a run inherit), so that a process about to
// die of an uncaught exception can record the crash on them, and the error on the run it came
// from (Queue.abandon).

export type RunInFlight = Run & { name: string };

export function runsInFlight() {
  const running = new Map<string, RunInFlight>();
  const current = new AsyncLocalStorage<string>();
  return {
    /** Runs `fn` as the run `run`: in flight until it settles. */
    async track<T>(run: RunInFlight, fn: () => Promise<T>): Promise<T> {
      running.set(run.id, run);
      try {
        return await current.run(run.id, fn);
      } finally {
        running.delete(run.id);
      }
    },
    /**
     * Every run in flight, forgotten here, and the id of the one the calling code belongs to, if
     * any. Synchronous, and to be called synchronously from the exception's handler: that is where
     * the context of the code that threw is still the current one.
     */
    take(): { runs: RunInFlight[]; culprit: string | undefined } {
      const runs = [...running.values()];
      running.clear();
      return { runs, culprit: current.getStore() };
    },
  };
}

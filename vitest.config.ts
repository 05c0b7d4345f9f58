import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Vitest's default (one fork fewer than the cores) runs the files one at a time on a 2-core
    // machine; each file has its own database, so two at once are safe and take the suite from
    // ~400 s to ~250 s there, which keeps CI's three runs within its budget.
    maxWorkers: Math.max(2, availableParallelism()),
    // One process per worker for all its files, not one per file: each file made its own database
    // and service already, and re-importing the sources in a fresh process for each of 158 files
    // was a third of the suite's time (PGlite run 14.5 → 9.5 min on 2 cores). A test must not
    // leave process-wide state behind (env, listeners, timers): none does.
    isolate: false,
    // Guards against a hung test only; no test asserts on time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

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
    // Guards against a hung test only; no test asserts on time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

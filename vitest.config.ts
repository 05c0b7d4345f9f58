import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Guards against a hung test only; no test asserts on time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

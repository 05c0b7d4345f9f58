// `svc worker` (src/cli/worker.ts) as a child process whose job transactions stop just before
// their commit (stop-before-commit.ts, `hang`): it prints `stopped before commit` once a run is
// there, and waits for the SIGKILL the test sends. Configured from the environment like the CLI;
// STALL_ON names the table whose transactions stop (stop-before-commit.ts's `watch`).
import { startWorker } from '../../src/cli/worker.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/platform/db/open.ts';
import { stopBeforeCommit } from './stop-before-commit.ts';

const config = loadConfig();
if (!config.databaseUrl) throw new Error('stalling-worker runs on PostgreSQL only (DATABASE_URL)');
const db = stopBeforeCommit(
  await openDatabase(config),
  'hang',
  () => {
    process.stdout.write('stopped before commit\n');
  },
  process.env.STALL_ON || undefined,
);
await startWorker(config, { database: db });
process.stdout.write('worker running\n');

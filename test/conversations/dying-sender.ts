// `svc worker` (src/cli/worker.ts) as a child process that stops at the moment a send is about to
// claim its message (before the claim: nothing is written, Meta is not called): it prints
// `stopped at the claim` and waits for the SIGKILL the test sends. Configured from the environment
// like the CLI. test/conversations/send-sweep.test.ts.
import { startWorker } from '../../src/cli/worker.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/platform/db/open.ts';
import { dyingDatabase, isClaim } from '../helpers/dying-database.ts';

const config = loadConfig();
if (!config.databaseUrl) throw new Error('dying-sender runs on PostgreSQL only (DATABASE_URL)');
const { db } = dyingDatabase(await openDatabase(config), {
  stopAt: isClaim,
  onStop: () => process.stdout.write('stopped at the claim\n'),
});
await startWorker(config, { database: db });
process.stdout.write('worker running\n');

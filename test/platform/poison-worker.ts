// A job worker process composed as `svc worker` is (src/cli/main.ts: exitOnCrash, then
// src/cli/worker.ts: startJobs), with the test jobs of poison-jobs.ts beside the service's own: the test-poison
// job's run throws in a timer, so this process dies of an uncaught exception once it takes that
// job. Configured from the environment like the CLI; PostgreSQL only (the test reads the database
// while this process runs). test/platform/queue-crash.test.ts restarts it as a supervisor would.
import { exitOnCrash } from '../../src/cli/crash.ts';
import { loadConfig } from '../../src/config.ts';
import { startJobs } from '../../src/jobs/index.ts';
import { openDatabase } from '../../src/platform/db/open.ts';
import { createLogger } from '../../src/platform/log.ts';
import { loadSecrets } from '../../src/platform/secrets.ts';
import { healthyJob, poisonJob } from './poison-jobs.ts';

const config = loadConfig();
if (!config.databaseUrl) throw new Error('poison-worker runs on PostgreSQL only (DATABASE_URL)');
const log = createLogger(config.logLevel);
exitOnCrash(log);
const db = await openDatabase(config);
const secrets = loadSecrets(config.dataDir, config.secretsKey);
await startJobs(
  { config, db, log, now: () => new Date(), secrets },
  { work: true, extra: [poisonJob, healthyJob] },
);
process.stdout.write('worker running\n');

// A worker as `svc worker` runs it, for bench/webhooks.ts's drain: the real startJobs on
// DATABASE_URL (its own pool), logging at info to stdout like a deployment. It loads, connects and
// registers the jobs first and tells its parent it is ready over IPC; it starts taking jobs only
// (and routing the webhook inbox) when the parent says `go`, so the drain the bench times is the work, not tsx loading the worker.
// Unlike `svc worker` it schedules no recurring jobs and returns no expired leases (supervise).
// WORKER_POLL_MS and WORKER_CONCURRENCY pass through; it serves until SIGTERM. BENCH_WORKER_LOG:
// a file its warnings and errors are appended to (a retried job says why there).
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startJobs } from '../src/jobs/index.ts';
import { startInboxRouter } from '../src/jobs/route-webhook-inbox.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { createLogger } from '../src/platform/log.ts';
import { loadSecrets } from '../src/platform/secrets.ts';

const env = process.env;
const url = env.DATABASE_URL;
if (!url) throw new Error('webhooks-worker: DATABASE_URL is required');
const config = loadConfig({
  PORT: '0',
  LOG_LEVEL: 'info',
  DATA_DIR: env.BENCH_DATA_DIR ?? '',
  DATABASE_URL: url,
  WORKER_POLL_MS: env.WORKER_POLL_MS,
  WORKER_CONCURRENCY: env.WORKER_CONCURRENCY,
});
const log = env.BENCH_WORKER_LOG
  ? createLogger('warn', pino.destination({ dest: env.BENCH_WORKER_LOG, append: true, sync: true }))
  : createLogger(config.logLevel);
const db = openPostgres(url, config.databasePoolSize);
await db.query('select 1');
const secrets = loadSecrets(config.dataDir, config.secretsKey);

// The queue opened and every job registered before `go`, so that `go` starts only the fetching.
const queue = await startJobs({ config, db, log, now: () => new Date(), secrets }, { work: false });
let router: ReturnType<typeof startInboxRouter> | undefined;
process.on('message', async (message) => {
  if (message !== 'go') return;
  await queue.work({ concurrency: config.worker.concurrency });
  // As startJobs starts it in a worker: the inbox's router beside the jobs.
  router = startInboxRouter({ config, db, log, now: () => new Date(), secrets, queue });
});
process.send?.({ pid: process.pid });
process.once('SIGTERM', async () => {
  await router?.stop(5000);
  await queue.stop({ timeoutMs: 5000 });
  await db.close();
  process.exit(0);
});

// A worker as `svc worker` runs it, for bench/webhooks.ts's drain: the real startJobs on
// DATABASE_URL (its own pool), logging at info to stdout like a deployment. It loads and connects
// first and tells its parent it is ready over IPC; it starts taking jobs only when the parent
// says `go`, so the drain the bench times starts with the worker, not with tsx loading it.
// WORKER_POLL_MS and WORKER_CONCURRENCY pass through; it serves until SIGTERM.
import { loadConfig } from '../src/config.ts';
import { startJobs } from '../src/jobs/index.ts';
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
const log = createLogger(config.logLevel);
const db = openPostgres(url, config.databasePoolSize);
await db.query('select 1');
const secrets = loadSecrets(config.dataDir, config.secretsKey);

let stop: (() => Promise<void>) | null = null;
process.on('message', async (message) => {
  if (message !== 'go' || stop) return;
  const queue = await startJobs({ config, db, log, now: () => new Date(), secrets }, { work: true });
  stop = () => queue.stop({ timeoutMs: 5000 });
  process.send?.('working');
});
process.send?.({ pid: process.pid });
process.once('SIGTERM', async () => {
  await stop?.();
  await db.close();
  process.exit(0);
});

import { type Config, resolvePublicUrl } from '../config.ts';
import { mediaUrlSigner } from '../domain/signed-url.ts';
import { startJobs } from '../jobs/index.ts';
import type { Database } from '../platform/db/database.ts';
import { migrate } from '../platform/db/migrate.ts';
import { createLogger } from '../platform/log.ts';
import { processMetrics } from '../platform/metrics/collectors.ts';
import { listenMetrics } from '../platform/metrics/endpoint.ts';
import { loadSecrets } from '../platform/secrets.ts';
import { openObjectStore } from '../platform/storage/open-store.ts';
import { openForCommand } from './running-service.ts';

/**
 * `svc worker`: the job worker alone, no HTTP. Any number of them may run against one PostgreSQL
 * (pg-boss claims each job with FOR UPDATE SKIP LOCKED). On the embedded database it takes the
 * data directory's lock, so it is refused while `svc start` (which runs its own worker) is up.
 * Resolves to a stop function; SIGTERM/SIGINT call it. `database` replaces the one the
 * configuration opens (a test wraps it to stop a run at a known point); the worker closes it.
 */
export async function startWorker(
  config: Config,
  { database }: { database?: Database } = {},
): Promise<() => Promise<void>> {
  const log = createLogger(config.logLevel);
  const db = database ?? (await openForCommand(config, 'worker'));
  try {
    // The same schema the API expects: a worker started first must not run against an old one.
    const applied = await migrate(db);
    if (applied.length) log.info({ applied }, 'migrations applied');
    const secrets = loadSecrets(config.dataDir, config.secretsKey);
    const now = () => new Date();
    // The address Meta fetches a post's media from: the API processes', which serve /storage/v1.
    const mediaUrl = mediaUrlSigner({ secrets, publicUrl: resolvePublicUrl(config, config.port), now });
    const storage = await openObjectStore(config.storage);
    // A worker has no public port: its metrics (sends, publishes, webhook lag, queue) only on METRICS_PORT.
    const metrics = processMetrics(db);
    const queue = await startJobs(
      { config, db, log, now, secrets, mediaUrl, storage, metrics },
      { work: true },
    );
    const listener =
      config.metrics.port === undefined
        ? undefined
        : await listenMetrics(metrics, config.metrics.port, config.metrics.host).catch(async (err) => {
            await queue.stop({ timeoutMs: 0 });
            throw err;
          });
    log.info(
      { engine: db.engine, concurrency: config.worker.concurrency, metrics: listener?.url },
      'worker running',
    );
    let stopping: Promise<void> | undefined;
    return () => {
      stopping ??= (async () => {
        try {
          await listener?.close();
          await queue.stop({ timeoutMs: config.shutdownTimeoutMs });
        } finally {
          await db.close();
        }
        log.info('worker stopped');
        await new Promise<void>((resolve) => log.flush(() => resolve()));
      })();
      return stopping;
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}

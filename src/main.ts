import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import type { DestinationStream } from 'pino';
import { requestListener } from './app.ts';
import { loadSigningKeys } from './auth/signing-keys.ts';
import { type Config, resolvePublicUrl } from './config.ts';
import { createKeyCheck, KEY_REVOKED_CHANNEL } from './domain/key-check.ts';
import { createPlanCache } from './domain/plan-cache.ts';
import { mediaUrlSigner } from './domain/signed-url.ts';
import type { JobDeps, MakeJob, MediaUrl } from './jobs/deps.ts';
import { startJobs, startWorkLater } from './jobs/index.ts';
import { lockDataDir } from './platform/data-dir-lock.ts';
import type { Database } from './platform/db/database.ts';
import { migrate, SCHEMA_CHANNEL } from './platform/db/migrate.ts';
import { openDatabase } from './platform/db/open.ts';
import { serverLifecycle } from './platform/http/server-lifecycle.ts';
import { createTokens } from './platform/jwt.ts';
import { createLogger, flushAccessLines } from './platform/log.ts';
import { openMail } from './platform/mail/dispatch.ts';
import { processMetrics } from './platform/metrics/collectors.ts';
import { listenMetrics } from './platform/metrics/endpoint.ts';
import { createPasswords } from './platform/passwords.ts';
import { makePrivate, tightenTree } from './platform/private-dir.ts';
import { wakeSignal } from './platform/queue/batch-loop.ts';
import type { Queue } from './platform/queue/queue.ts';
import { loadSecrets } from './platform/secrets.ts';
import type { ObjectStore } from './platform/storage/object-store.ts';
import { openObjectStore } from './platform/storage/open-store.ts';
import type { Tracing } from './platform/tracing/tracing.ts';
import { type Realtime, startRealtime } from './realtime/server.ts';
import { reloadSchemaCache, schemaCacheLoader } from './rest/schema-cache.ts';
import { createLimits, type Services } from './services.ts';

export type RunningService = {
  url: string;
  /** The METRICS_PORT listener's address, when one is set. */
  metricsUrl?: string;
  services: Services;
  /** Stops accepting connections, lets in-flight requests finish, then closes the database. */
  close(): Promise<void>;
};

/** The most a broadcast's payload may hold: it travels in a NOTIFY (8000 bytes with the rest). */
const BROADCAST_BYTES = 6_000;

/** The composition root: config → data-dir lock (embedded only) → database → migrate → app → listen. */
export async function startService(
  config: Config,
  opts: {
    logDestination?: DestinationStream;
    database?: Database;
    now?: () => Date;
    /** Jobs beside src/jobs' own (tests register what they need). */
    jobs?: MakeJob[];
    /** The object store; by default the disk under STORAGE_DIR. */
    storage?: ObjectStore;
    /** Signed URLs of stored media for the social publisher (src/jobs/index.ts, JobDeps). */
    mediaUrl?: MediaUrl;
  } = {},
): Promise<RunningService> {
  const log = createLogger(config.logLevel, opts.logDestination);
  // Before anything is written there: every tenant's rows and the keys are this user's alone.
  const loosened = makePrivate(config.dataDir) + makePrivate(config.storage.dir, 'STORAGE_DIR');
  if (loosened)
    log.warn({ entries: loosened }, 'files in DATA_DIR other users could read were made private (0600/0700)');
  // Its dummy hash is made on the thread pool while the rest starts (auth/password.ts).
  const passwords = createPasswords(config.bcryptCost);
  const keys = await loadSigningKeys(config.dataDir, config.jwtPrivateKey);
  const secrets = loadSecrets(config.dataDir, config.secretsKey);
  // The embedded database has one writer: this process, or a refusal naming the one that runs.
  const lock = opts.database || config.databaseUrl ? undefined : lockDataDir(config.dataDir, 'start');
  let db: Database;
  try {
    db = opts.database ?? (await openDatabase(config));
  } catch (err) {
    lock?.release();
    throw err;
  }
  try {
    const applied = await migrate(db);
    if (applied.length) log.info({ applied }, 'migrations applied');
    // The files the migrations made (PGlite makes them 0666); none when none was applied, and
    // the walk over DATA_DIR's thousand files is then saved (openDatabase made private what the
    // open made).
    if (lock && applied.length) tightenTree(config.dataDir);
  } catch (err) {
    await db.close();
    lock?.release();
    throw err;
  }

  // From here on, statements under a request's span are spans of their own (when tracing).
  // The SDK is loaded only then: a start without tracing never loads it.
  const tracing: Tracing | undefined = config.tracing.endpoint
    ? (await import('./platform/tracing/tracing.ts')).startTracing(
        config.tracing.endpoint,
        config.tracing.serviceName,
      )
    : undefined;
  // Scrapes read the gauges through the database as it was: a scrape is no trace of its own.
  const untraced = db;
  if (tracing)
    db = (await import('./platform/tracing/traced-database.ts')).tracedDatabase(db, tracing.tracer);

  // The app is bound after listen, so that an ephemeral port can be part of the public URL;
  // requests arriving before it wait for it (server-lifecycle.ts).
  const http = serverLifecycle(log);
  const server = http.server;
  // Idle keep-alive connections outlive the clients' and proxies' in front (undici 4 s, load
  // balancers 60 s), so the client closes first and never sends on a socket this side is closing
  // (with Node's 5 s default, a request racing the close is reset: ECONNRESET, or a proxy's 502).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
  } catch (err) {
    await db.close();
    await tracing?.shutdown();
    lock?.release();
    throw err;
  }
  const url = resolvePublicUrl(config, (server.address() as AddressInfo).port);
  lock?.setUrl(url);

  const metrics = processMetrics(untraced);
  let metricsListener: Awaited<ReturnType<typeof listenMetrics>> | undefined;
  let redis: Redis | undefined;
  let stopListening: (() => Promise<void>) | undefined;
  let queue: Queue | undefined;
  let realtime: Realtime | undefined;
  let services: Services;
  const inline = config.worker.mode === 'inline';
  const workLater = inline && config.worker.startDelayMs > 0;
  let jobDeps: JobDeps | undefined;
  try {
    const tokens = createTokens(keys, `${url}/auth/v1`);
    // Shared counters when several processes serve one deployment; in memory otherwise.
    // Its client is loaded only then.
    redis = config.redisUrl
      ? new (await import('ioredis')).Redis(config.redisUrl, {
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          lazyConnect: true,
        })
      : undefined;
    let redisDown = false; // one warning per outage, not one per reconnect attempt
    redis?.on('error', (err) => {
      if (!redisDown) log.warn({ err: { message: err.message } }, 'redis unavailable; counting in memory');
      redisDown = true;
    });
    redis?.on('ready', () => {
      if (redisDown) log.info('redis available again');
      redisDown = false;
    });
    await redis?.connect().catch(() => {}); // reported by the error handler above
    const now = opts.now ?? (() => new Date());
    const storage = opts.storage ?? (await openObjectStore(config.storage));
    // The worker runs in this process unless WORKER=off (then `svc worker` runs it elsewhere).
    // Made before the worker, so a plan billing changes is forgotten here at once (other processes: docs/billing.md).
    const plans = createPlanCache(db);
    const base = {
      config,
      forgetPlan: (org: string) => plans.forget(org),
      db,
      log,
      now,
      secrets,
      // Meta fetches a post's media from these links; the public address must reach this service.
      mediaUrl: opts.mediaUrl ?? mediaUrlSigner({ secrets, publicUrl: url, now }),
      storage,
      metrics,
    };
    // A webhook receipt wakes the inline worker's inbox router as soon as it commits.
    const webhookInbox = wakeSignal();
    // Registered now (requests enqueue from the first one on); the jobs run from now on, or from
    // WORKER_START_DELAY_MS after the service answers (startWorkLater below).
    queue = await startJobs(base, {
      work: workLater ? 'later' : inline,
      extra: opts.jobs,
      inbox: webhookInbox,
    });
    jobDeps = { ...base, queue };
    const schemaCache = schemaCacheLoader(db);
    services = {
      config,
      publicUrl: url,
      db,
      keys,
      secrets,
      tokens,
      sessions: { tokens, expiresIn: config.jwtExpirySeconds },
      passwords,
      limits: createLimits(config, { redis, prefix: config.redisPrefix }, (limit) =>
        metrics.refusals.inc({ limit }),
      ),
      plans,
      keyCheck: createKeyCheck(db, config.agentKeyRecheckSeconds * 1000),
      schema: schemaCache.cache,
      schemaPending: schemaCache.pending,
      log,
      mail: openMail(config, log),
      queue,
      webhookInbox,
      storage,
      now,
      metrics,
    };
    const schema = services.schema;
    const stopSchema = await db.listen(SCHEMA_CHANNEL, () => {
      reloadSchemaCache(db, schema).then(
        () => log.info({ relations: schema.size }, 'schema cache reloaded after a migration'),
        (err) => log.error({ err: { message: (err as Error).message } }, 'schema cache reload failed'),
      );
    });
    stopListening = stopSchema;
    realtime = await startRealtime(services, { ...config.realtime, broadcastBytes: BROADCAST_BYTES });
    const rt = realtime;
    // A key revoked through any process is refused by this one's MCP endpoint at once, and its
    // realtime channels are closed.
    const keyCheck = services.keyCheck;
    const stopKeys = await db.listen(KEY_REVOKED_CHANNEL, (keyId) => {
      keyCheck.forgetAll();
      rt.hub.onKeyRevoked(keyId);
    });
    stopListening = async () => {
      await Promise.all([stopSchema(), stopKeys()]);
    };
    if (config.metrics.port !== undefined)
      metricsListener = await listenMetrics(metrics, config.metrics.port, config.metrics.host);
    // Read while the service starts answering, after the statements above (PGlite runs one at a
    // time); a /rest/v1 request waits for it (rest/schema-cache.ts), a failure is its 5xx.
    schemaCache.pending()?.catch(() => {});
    // Upgrades other than realtime's are refused: no other surface speaks websocket.
    server.on('upgrade', (req, socket, head) => {
      if (!rt.upgrade(req, socket, head)) socket.destroy();
    });
    const listener = requestListener(services);
    http.bind(tracing ? tracing.listener(listener) : listener);
  } catch (err) {
    // Nothing half-started outlives a failed start.
    http.fail();
    server.close();
    await metricsListener?.close();
    await queue?.stop({ timeoutMs: 1000 }).catch(() => {});
    await realtime?.close().catch(() => {});
    await stopListening?.().catch(() => {});
    redis?.disconnect();
    await db.close();
    await tracing?.shutdown();
    lock?.release();
    throw err;
  }
  const worker =
    workLater && jobDeps
      ? startWorkLater(jobDeps, config.worker.startDelayMs, services.webhookInbox)
      : undefined;
  log.info(
    { url, engine: db.engine, worker: config.worker.mode, metrics: metricsListener?.url },
    'listening',
  );

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      // Requests in flight are answered (past the timeout, whatever is left is cut); no new one
      // is started. Websockets are closed first (their clients reconnect elsewhere): an upgraded
      // socket would otherwise keep the server from closing.
      await Promise.all([realtime?.close(), http.drain(config.shutdownTimeoutMs)]);
      await metricsListener?.close();
      try {
        // After the last request (whose jobs are committed), before the database: runs in flight
        // may finish within the same timeout; one cut short runs again after its lease.
        // Not begun yet, or begun: then its inbox router's batch in hand ends first, then the queue.
        await worker?.stop(config.shutdownTimeoutMs);
        await services.queue.stop({ timeoutMs: config.shutdownTimeoutMs });
        await stopListening?.();
        await services.mail.close();
        await db.close();
        await tracing?.shutdown();
      } finally {
        lock?.release();
        await redis?.quit().catch(() => redis.disconnect());
      }
      log.info('stopped');
      // The log is written asynchronously (platform/log.ts): out before the caller may exit.
      flushAccessLines();
      await new Promise<void>((resolve) => log.flush(() => resolve()));
    })();
    return closing;
  };
  return { url, metricsUrl: metricsListener?.url, services, close };
}

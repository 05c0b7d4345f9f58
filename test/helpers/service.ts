import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { type Config, loadConfig } from '../../src/config.ts';
import { startFakeShopify } from '../../src/dev/fake-shopify/server.ts';
import type { MakeJob, MediaUrl } from '../../src/jobs/deps.ts';
import { type RunningService, startService } from '../../src/main.ts';
import type { Database } from '../../src/platform/db/database.ts';
import { flushAccessLines } from '../../src/platform/log.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { type FreshDatabase, freshDatabase, openTestPostgres } from './db.ts';
import { storageEnv } from './storage.ts';

export type TestService = RunningService & {
  anonKey: string;
  serviceRoleKey: string;
  dataDir: string;
  /** The PostgreSQL database's URL (so a test can open more pools on it); undefined on PGlite. */
  databaseUrl: string | undefined;
  /** Every log line the service wrote, as text. */
  logs: () => string;
  /** The same lines, each parsed from its JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever fields a line has
  logLines: () => any[];
  /**
   * The open fake Graph API (any token acts for any id) the service talks to when the test named
   * no META_GRAPH_URL / META_INSTAGRAM_GRAPH_URL of its own, so connecting an account is proven
   * without the test knowing; undefined when the test gave both.
   */
  openGraph: FakeGraph | undefined;
  stop(): Promise<void>;
};

/**
 * The real service on an ephemeral port over a private database, with a throwaway data dir.
 * `env` overrides configuration exactly as the environment would; `now` replaces the wall clock
 * where the service computes calendar rules (see `Services.now`); `jobs` are registered beside
 * src/jobs' own. `databaseUrl`: a PostgreSQL database of the test's own (pg-cluster.ts) instead
 * of a copy of the run's template; the service migrates it, and it is left as it is at the stop.
 */
export async function startTestService(
  env: Record<string, string> = {},
  {
    dataDir,
    now,
    jobs,
    mediaUrl,
    databaseUrl,
    database,
  }: {
    dataDir?: string;
    now?: () => Date;
    jobs?: MakeJob[];
    mediaUrl?: MediaUrl;
    databaseUrl?: string;
    /** Opened by the test (with `databaseUrl`, its URL): the service closes it at its stop. */
    database?: Database;
  } = {},
): Promise<TestService> {
  const dir = dataDir ?? mkdtempSync(path.join(tmpdir(), 'svc-test-'));
  // Connecting asks the provider (src/channels/account-proof.ts): never the real one from a test.
  const openGraph = env.META_GRAPH_URL && env.META_INSTAGRAM_GRAPH_URL ? undefined : await startFakeGraph();
  const openShopify = env.SHOPIFY_SHOP_URL ? undefined : await startFakeShopify({ open: true });
  const config: Config = loadConfig({
    PORT: '0',
    LOG_LEVEL: 'info',
    DATA_DIR: dir,
    BCRYPT_COST: '10',
    // The worker begins before the service answers, as the tests were written for; the delay of a
    // real start (WORKER_START_DELAY_MS) is tested on its own (queue-lifecycle.test.ts).
    WORKER_START_DELAY_MS: '0',
    ...(openGraph ? { META_GRAPH_URL: openGraph.url, META_INSTAGRAM_GRAPH_URL: openGraph.url } : {}),
    ...(openShopify ? { SHOPIFY_SHOP_URL: openShopify.shopUrl } : {}),
    // The run's pool mode (.ci/run); the database itself is opened by the helpers (db.ts).
    ...(process.env.DATABASE_POOL_MODE ? { DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE } : {}),
    // The run's store: the disk under DATA_DIR, or a prefix of its own in TEST_STORAGE_URL's bucket;
    // a test that names STORAGE_DIR or STORAGE_URL (even '': the disk) is about that store.
    ...('STORAGE_DIR' in env || 'STORAGE_URL' in env ? {} : storageEnv()),
    ...env,
  });
  const fresh = database
    ? { db: database, url: databaseUrl, drop: async () => {} }
    : databaseUrl
      ? ownDatabase(databaseUrl)
      : await freshDatabase();
  const captured: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      captured.push(chunk.toString());
      cb();
    },
  });
  const service = await startService(config, {
    logDestination: sink,
    database: fresh.db,
    now,
    jobs,
    mediaUrl,
  });
  // Access lines wait a moment before their write (platform/log.ts): hand them over first.
  const logs = () => {
    flushAccessLines();
    return captured.join('');
  };
  return {
    ...service,
    anonKey: service.services.keys.anonKey,
    serviceRoleKey: service.services.keys.serviceRoleKey,
    dataDir: dir,
    databaseUrl: fresh.url,
    openGraph,
    logs,
    logLines: () =>
      logs()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    async stop() {
      await service.close();
      await openGraph?.close();
      await openShopify?.close();
      await fresh.drop();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The test's own database: the service closes it at its stop; the test removes it. */
const ownDatabase = (url: string): FreshDatabase => ({
  db: openTestPostgres(url, 10),
  url,
  drop: async () => {},
});

let counter = 0;
/** A unique email per call, so tests never collide. */
export const uniqueEmail = (tag = 'user') => `${tag}-${process.pid}-${Date.now()}-${++counter}@example.test`;

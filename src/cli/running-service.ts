import { type Config, resolvePublicUrl } from '../config.ts';
import { lockDataDir, lockHolder } from '../platform/data-dir-lock.ts';
import type { Database } from '../platform/db/database.ts';
import { openDatabase } from '../platform/db/open.ts';
import { makePrivate } from '../platform/private-dir.ts';

/**
 * The URL of the service running on this data directory (the embedded default records it in
 * DATA_DIR/svc.lock), or null when none runs there or the database is PostgreSQL.
 */
export function runningServiceUrl(config: Config): string | null {
  return config.databaseUrl ? null : (lockHolder(config.dataDir)?.url ?? null);
}

/** Where the service is, or would be: the running one, else the configured address. */
export const serviceUrl = (config: Config) =>
  runningServiceUrl(config) ?? resolvePublicUrl(config, config.port);

/**
 * The database for a one-off command. On the embedded default the command holds the data
 * directory's lock while it runs, so it is refused (DataDirLocked, naming the running process)
 * rather than opening the database beside a running service; PostgreSQL has many writers.
 */
export async function openForCommand(config: Config, command: string): Promise<Database> {
  makePrivate(config.dataDir);
  const lock = config.databaseUrl ? undefined : lockDataDir(config.dataDir, command);
  try {
    const db = await openDatabase(config);
    return {
      ...db,
      async close() {
        try {
          await db.close();
        } finally {
          lock?.release();
        }
      },
    };
  } catch (err) {
    lock?.release();
    throw err;
  }
}

import type { Config } from '../config.ts';
import { lockDataDir } from '../platform/data-dir-lock.ts';
import type { Database } from '../platform/db/database.ts';
import { openDatabase } from '../platform/db/open.ts';
import { makePrivate } from '../platform/private-dir.ts';

export { runningServiceUrl, serviceUrl } from './service-url.ts';

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

/** The running service's port refused us: it stopped, and the database is free to open here. */
export const isConnectionRefused = (err: unknown) =>
  (err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';

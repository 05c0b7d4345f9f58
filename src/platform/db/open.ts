import path from 'node:path';
import { tightenTree } from '../private-dir.ts';
import type { Database } from './database.ts';
import { openPostgres } from './pg.ts';
import { openPostgresPooled } from './pg-pooled.ts';
import { openPglite } from './pglite.ts';

/** Where the database is and how to reach it: the fields of the same names of src/config.ts's Config. */
export type DatabaseSettings = {
  databaseUrl: string | undefined;
  databasePoolSize: number;
  databaseReadConnections: number;
  databasePoolMode: 'session' | 'transaction';
  databaseDirectUrl: string | undefined;
  dataDir: string;
};

/** PostgreSQL when DATABASE_URL is set, else the embedded PGlite in DATA_DIR/pglite. */
export async function openDatabase(config: DatabaseSettings): Promise<Database> {
  // Behind a transaction-mode pooler: decided here, once, not on every statement.
  if (config.databaseUrl && config.databasePoolMode === 'transaction')
    return openPostgresPooled(config.databaseUrl, config.databasePoolSize, config.databaseDirectUrl);
  if (config.databaseUrl)
    return openPostgres(config.databaseUrl, config.databasePoolSize, config.databaseReadConnections);
  // PGlite chmods the files it makes to 0666 whatever the umask: made private again once they
  // exist and once it has closed (platform/private-dir.ts).
  const dir = path.join(config.dataDir, 'pglite');
  const db = await openPglite(dir);
  tightenTree(dir);
  return {
    ...db,
    async close() {
      await db.close();
      tightenTree(dir);
    },
  };
}

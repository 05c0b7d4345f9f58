import path from 'node:path';
import type { Config } from '../../config.ts';
import type { Database } from './database.ts';
import { openPostgres } from './pg.ts';
import { openPglite } from './pglite.ts';

/** PostgreSQL when DATABASE_URL is set, else the embedded PGlite in DATA_DIR/pglite. */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'databaseReadConnections' | 'dataDir'>,
): Promise<Database> {
  if (config.databaseUrl)
    return openPostgres(config.databaseUrl, config.databasePoolSize, config.databaseReadConnections);
  return openPglite(path.join(config.dataDir, 'pglite'));
}

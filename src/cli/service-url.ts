import { type Config, resolvePublicUrl } from '../config.ts';
import { lockHolder } from '../platform/data-dir-lock.ts';

// Apart from running-service.ts, which opens databases: `svc keys` needs only this, and loads
// nothing else (main.ts imports each command's code when that command runs).

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

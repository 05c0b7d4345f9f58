import type { Config } from '../config.ts';
import { purgeExpired } from '../domain/retention.ts';
import { openObjectStore } from '../platform/storage/open-store.ts';
import { openForCommand } from './running-service.ts';

/**
 * `svc purge`: the daily retention purge, now (docs/retention.md). Prints the rows deleted per
 * table as one JSON object. On PostgreSQL it runs beside the service and its workers (rows they
 * hold are skipped, not waited on); on the embedded database it needs the service stopped (it opens
 * the database under the data directory's lock).
 */
export async function purgeCommand(config: Config, args: string[]): Promise<number> {
  if (args.length > 0) {
    process.stderr.write('usage: svc purge\n');
    return 2;
  }
  const db = await openForCommand(config, 'purge');
  try {
    const deleted = await purgeExpired(db, {
      at: new Date(),
      batchSize: config.purge.batchSize,
      storage: await openObjectStore(config.storage),
    });
    process.stdout.write(`${JSON.stringify({ deleted })}\n`);
    return 0;
  } catch (err) {
    // 42883: the function is missing, the database predates migrations/0021_retention.sql.
    if ((err as { code?: string }).code !== '42883') throw err;
    process.stderr.write('the database has no purge yet: run `svc migrate` first\n');
    return 1;
  } finally {
    await db.close();
  }
}

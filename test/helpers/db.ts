import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import type { Database } from '../../src/platform/db/database.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { openPostgresPooled } from '../../src/platform/db/pg-pooled.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { adminUrl, databaseUrl } from './urls.ts';

export const onPostgres = () => Boolean(process.env.TEST_DATABASE_URL);

/**
 * A database the way the service would open it: behind a transaction-mode pooler when the run
 * says so (DATABASE_POOL_MODE=transaction, .ci/run), with LISTEN past the pooler on the admin
 * server when there is one (DATABASE_DIRECT_URL's part).
 */
export function openTestPostgres(url: string, poolSize: number): Database {
  if (process.env.DATABASE_POOL_MODE !== 'transaction') return openPostgres(url, poolSize);
  const admin = process.env.TEST_DATABASE_ADMIN_URL;
  return openPostgresPooled(
    url,
    poolSize,
    admin ? databaseUrl(admin, new URL(url).pathname.slice(1)) : undefined,
  );
}

export type FreshDatabase = { db: Database; url: string | undefined; drop(): Promise<void> };

/** A private, migrated database: a copy of the run's template on PostgreSQL, else a new PGlite. */
export async function freshDatabase(): Promise<FreshDatabase> {
  const server = process.env.TEST_DATABASE_URL;
  if (server) {
    const name = `svc_t_${randomBytes(6).toString('hex')}`;
    const admin = openPostgres(adminUrl(server), 1);
    await admin.query(`create database ${name} template ${inject('pgTemplate')}`);
    const url = databaseUrl(server, name);
    const db = openTestPostgres(url, 10);
    return {
      db,
      url,
      async drop() {
        await db.close().catch(() => {});
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.close();
      },
    };
  }
  const template = new Blob([readFileSync(inject('pgliteTemplate'))]);
  const db = await openPglite(undefined, template);
  return { db, url: undefined, drop: () => db.close().catch(() => {}) };
}

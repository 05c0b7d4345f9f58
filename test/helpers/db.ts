import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import type { Database } from '../../src/platform/db/database.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { adminUrl, databaseUrl } from './urls.ts';

export const onPostgres = () => Boolean(process.env.TEST_DATABASE_URL);

export type FreshDatabase = { db: Database; url: string | undefined; drop(): Promise<void> };

/** A private, migrated database: a copy of the run's template on PostgreSQL, else a new PGlite. */
export async function freshDatabase(): Promise<FreshDatabase> {
  const server = process.env.TEST_DATABASE_URL;
  if (server) {
    const name = `svc_t_${randomBytes(6).toString('hex')}`;
    const admin = openPostgres(adminUrl(server), 1);
    await admin.query(`create database ${name} template ${inject('pgTemplate')}`);
    const url = databaseUrl(server, name);
    const db = openPostgres(url, 10);
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

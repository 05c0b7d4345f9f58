import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from '../root.ts';
import type { Database } from './database.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('migrations/', ROOT));

type Migration = { name: string; sql: string; checksum: string };

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

export class MigrationError extends Error {}

export const SCHEMA_CHANNEL = 'svc_schema_changed';

/**
 * Applies pending migrations once, in order, each in its own transaction. Forward-only: an applied
 * migration whose file changed is refused rather than silently diverging. The advisory lock makes
 * two processes starting together take turns; the second finds nothing left to do.
 */
export async function migrate(db: Database, migrations = loadMigrations()): Promise<string[]> {
  return db.withAdvisoryLock('svc.migrate', async (conn) => {
    // Made once; a start after that reads whether it is there instead of writing the catalog
    // (the revoke below is a write) at each start.
    const [meta] = await conn.query<{ made: boolean }>(
      `select to_regclass('svc_meta.migrations') is not null as made`,
    );
    if (!meta?.made)
      await conn.exec(`
      create schema if not exists svc_meta;
      create table if not exists svc_meta.migrations (
        name text primary key,
        checksum text not null,
        applied_at timestamptz not null default now()
      );
      revoke all on schema svc_meta from public;`);
    const applied = new Map(
      (
        await conn.query<{ name: string; checksum: string }>('select name, checksum from svc_meta.migrations')
      ).map((r) => [r.name, r.checksum]),
    );
    const done: string[] = [];
    for (const m of migrations) {
      const known = applied.get(m.name);
      if (known === m.checksum) continue;
      if (known)
        throw new MigrationError(
          `migration ${m.name} was changed after it was applied; add a new one instead`,
        );
      await conn.exec('begin');
      try {
        await conn.exec(m.sql);
        await conn.query('insert into svc_meta.migrations (name, checksum) values ($1, $2)', [
          m.name,
          m.checksum,
        ]);
        await conn.exec('commit');
      } catch (err) {
        await conn.exec('rollback');
        throw new MigrationError(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      done.push(m.name);
    }
    // Running services reload what they serve from the catalog (the REST schema cache).
    if (done.length) await conn.exec(`notify ${SCHEMA_CHANNEL}`);
    return done;
  });
}

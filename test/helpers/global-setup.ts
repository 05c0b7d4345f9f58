import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import type { Database } from '../../src/platform/db/database.ts';
import { migrate } from '../../src/platform/db/migrate.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { openQueue } from '../../src/platform/queue/pg-boss.ts';
import { adminUrl, databaseUrl } from './urls.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** PostgreSQL: the migrated template database each test file copies. */
    pgTemplate: string;
    /** PGlite: a tarball of a migrated data dir each test file loads. */
    pgliteTemplate: string;
  }
}

/**
 * Migrates once per run: a template database on PostgreSQL (when TEST_DATABASE_URL is set) or a
 * snapshot of a migrated PGlite. Each test file then starts from a private copy of it.
 */
export default async function setup(project: TestProject) {
  // The bundle `svc` runs (bin/build.mjs), built once here rather than by the first tests that
  // start it, each finding it stale at once.
  execFileSync(process.execPath, [fileURLToPath(new URL('../../bin/build.mjs', import.meta.url))], {
    stdio: 'inherit',
  });
  const server = process.env.TEST_DATABASE_URL;
  if (server) {
    const template = `svc_tpl_${process.pid}_${Date.now()}`;
    const admin = openPostgres(adminUrl(server), 1);
    await admin.query(`create database ${template}`);
    const db = openPostgres(databaseUrl(adminUrl(server), template), 2);
    await migrate(db);
    await installQueue(db);
    await db.close();
    project.provide('pgTemplate', template);
    project.provide('pgliteTemplate', '');
    return async () => {
      await admin.query(`drop database if exists ${template} with (force)`);
      await admin.close();
    };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-template-'));
  const db = await openPglite(undefined);
  await migrate(db);
  await installQueue(db);
  const file = path.join(dir, 'template.tar');
  writeFileSync(file, Buffer.from(await (await db.snapshot()).arrayBuffer()));
  await db.close();
  project.provide('pgTemplate', '');
  project.provide('pgliteTemplate', file);
  return () => rmSync(dir, { recursive: true, force: true });
}

/** pg-boss creates its schema at its first start: once here, not in every test's service. */
async function installQueue(db: Database) {
  const queue = await openQueue(db, {
    log: pino({ level: 'silent' }),
    pollIntervalMs: 2000,
    supervise: false,
  });
  await queue.stop();
}

// Migration 0032 on a database that already holds links written before the http(s) rule: it runs,
// removes every link that is no web address (on drafts and on published posts alike, which the
// lifecycle guard otherwise keeps as they are), keeps the good ones, and refuses new bad ones.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/platform/db/database.ts';
import { loadMigrations, migrate } from '../../src/platform/db/migrate.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { adminUrl, databaseUrl } from '../helpers/urls.ts';

let db: Database;
let drop: () => Promise<void>;

/** An empty database of this test's own: migrations are applied here, not copied from a template. */
beforeAll(async () => {
  const server = process.env.TEST_DATABASE_URL;
  if (!server) {
    db = await openPglite(undefined);
    drop = () => db.close();
    return;
  }
  const name = `svc_link_${randomBytes(6).toString('hex')}`;
  const admin = openPostgres(adminUrl(server), 1);
  await admin.query(`create database ${name}`);
  db = openPostgres(databaseUrl(server, name), 2);
  drop = async () => {
    await db.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.close();
  };
});
afterAll(() => drop?.());

describe('migration 0032 (post links are http(s) addresses)', () => {
  it('removes the links that are no web address, keeps the others, and refuses new bad ones', async () => {
    await migrate(
      db,
      loadMigrations().filter((m) => m.name < '0032'),
    );
    const links = [
      'javascript:alert(document.cookie)',
      'data:text/html,<script>alert(1)</script>',
      'VBScript:msgbox(1)',
      'https://shop.example.com/sale',
      'HTTP://old.example.com',
    ];
    const ids = await db.transaction(async (tx) => {
      const [org] = await tx.query<{ id: string }>(
        "insert into organizations (name) values ('Old links') returning id",
      );
      const made: string[] = [];
      for (const [i, link] of links.entries()) {
        // Published posts too: the lifecycle guard refuses content changes to them.
        const [row] = await tx.query<{ id: string }>(
          `insert into social_posts (organization_id, platform, status, message, link, published_at)
           values ($1, 'facebook', $2, 'Old', $3, $4) returning id`,
          [org?.id, i % 2 ? 'published' : 'draft', link, i % 2 ? new Date().toISOString() : null],
        );
        made.push(row?.id as string);
      }
      return made;
    });

    await migrate(db);
    const after = await db.query<{ id: string; link: string | null; status: string }>(
      'select id, link, status from social_posts',
    );
    const byId = new Map(after.map((r) => [r.id, r]));
    expect(ids.map((id) => byId.get(id)?.link ?? null)).toEqual([
      null,
      null,
      null,
      'https://shop.example.com/sale',
      'HTTP://old.example.com',
    ]);
    expect(ids.map((id) => byId.get(id)?.status)).toEqual([
      'draft',
      'published',
      'draft',
      'published',
      'draft',
    ]);

    const refused = await db
      .query("update social_posts set link = 'javascript:alert(1)' where id = $1", [ids[0]])
      .then(
        () => null,
        (err: { code?: string }) => err.code,
      );
    expect(refused).toBe('23514');
  });
});

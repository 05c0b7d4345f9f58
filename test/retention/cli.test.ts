// `svc purge`: runs the purge now and prints the rows deleted per table as JSON, in batches of
// PURGE_BATCH_SIZE. On the embedded database (the service stopped) by default; on a fresh
// PostgreSQL database with TEST_DATABASE_URL.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/platform/db/database.ts';
import { openDatabase } from '../../src/platform/db/open.ts';
import { runCli } from '../helpers/cli.ts';
import { freshDatabase, onPostgres } from '../helpers/db.ts';
import {
  account,
  attempt,
  backdate,
  contact,
  conversation,
  count,
  delivery,
  item,
  message,
  order,
  organization,
  webhookEvent,
} from './seed.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-purge-'));
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
  rmSync(dir, { recursive: true, force: true });
});

/** A migrated database for the command, and a way to reach it from the test between runs. */
async function target(): Promise<{ env: Record<string, string>; open: () => Promise<Database> }> {
  const base = { DATA_DIR: dir, LOG_LEVEL: 'silent', PURGE_BATCH_SIZE: '1' };
  if (onPostgres()) {
    const fresh = await freshDatabase();
    cleanups.push(() => fresh.drop());
    const url = fresh.url as string;
    return { env: { ...base, DATABASE_URL: url }, open: async () => fresh.db };
  }
  const env = { ...base, DATABASE_URL: '' };
  expect((await runCli(['migrate'], env)).code).toBe(0);
  return { env, open: () => openDatabase(loadConfig(env)) };
}

async function seedExpired(db: Database) {
  const free = await organization(db, 'free', 'CLI Purge Ltd');
  const widget = await item(db, free, 'CLI-1', 10);
  const delivered = ['confirmed', 'processing', 'shipped', 'delivered'];
  const orders = [
    await order(db, free, widget, 1, delivered),
    await order(db, free, widget, 2, ['cancelled']),
  ];
  await backdate(db, 'public.orders', ['created_at', 'updated_at'], 31, 'id = any($1)', [orders]);
  const acc = await account(db, free, `wa-cli-${Date.now()}`);
  const conv = await conversation(db, free, acc, await contact(db, free, 'Dora'));
  await message(db, free, conv, acc, 'old news');
  await backdate(db, 'public.messages', ['created_at'], 31, 'conversation_id = $1', [conv]);
  await backdate(db, 'public.conversations', ['last_message_at'], 31, 'id = $1', [conv]);
  const d = await delivery(db, 'cli-delivery');
  await webhookEvent(db, free, d, 'cli-delivery');
  await backdate(db, 'app.webhook_events', ['received_at'], 31, 'delivery = $1', [d]);
  await backdate(db, 'app.webhook_deliveries', ['received_at'], 31, 'id = $1', [d]);
  await backdate(db, 'public.agent_auth_attempts', ['created_at'], 31, 'id = $1', [await attempt(db, free)]);
  return free;
}

describe('svc purge', () => {
  it('prints what it deleted per table, batch after batch; a second run finds nothing; contacts and inventory stay', async () => {
    const { env, open } = await target();
    let db = await open();
    const free = await seedExpired(db);
    if (!onPostgres()) await db.close(); // the command takes the data directory's lock

    const run = await runCli(['purge'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      deleted: {
        messages: 1,
        conversations: 1,
        orders: 2,
        order_items: 2,
        order_status_events: 7, // 5 for the delivered one (created … delivered), 2 for the cancelled one
        webhook_events: 1,
        webhook_deliveries: 1,
        agent_auth_attempts: 1,
        social_posts: 0,
        social_post_media: 0,
      },
    });
    const again = await runCli(['purge'], env);
    expect(Object.values(JSON.parse(again.stdout).deleted).every((n) => n === 0)).toBe(true);

    if (!onPostgres()) db = await open();
    expect(await count(db, 'public.contacts where organization_id = $1', [free])).toBe(1);
    expect(await count(db, 'public.inventory_items where organization_id = $1', [free])).toBe(1);
    if (!onPostgres()) await db.close();
  }, 60_000);

  it('refuses arguments with its usage', async () => {
    const r = await runCli(['purge', '--now'], { DATA_DIR: dir, DATABASE_URL: '', LOG_LEVEL: 'silent' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('usage: svc purge');
  });
});

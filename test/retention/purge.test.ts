// The retention purge (docs/retention.md, migrations/0021_retention.sql): what goes and what stays
// for each kind of row, measured per organization against its plan's data_retention_days (free 30,
// starter 365, scale 2,555 days); finished orders go with their lines and history and stock never
// moves; another tenant's rows are untouched; deletes go in batches. Runs on PGlite, and on
// PostgreSQL with TEST_DATABASE_URL.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpired } from '../../src/domain/retention.ts';
import type { Database } from '../../src/platform/db/database.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { onPostgres } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
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

let svc: TestService;
let db: Database;
beforeAll(async () => {
  svc = await startTestService({ WORKER: 'off' });
  db = svc.services.db;
});
afterAll(() => svc?.stop());

const purge = (batchSize = 1000) =>
  purgeExpired(db, { at: new Date(), batchSize, storage: svc.services.storage });
const ageOrder = (id: string, days: number) =>
  backdate(db, 'public.orders', ['created_at', 'updated_at'], days, 'id = $1', [id]);
const exists = async (table: string, id: string | number) =>
  (await count(db, `${table} where id = $1`, [id])) === 1;
const stockOf = (id: string) =>
  db.query('select quantity_on_hand, quantity_reserved from public.inventory_items where id = $1', [id]);

describe('orders', () => {
  it('a free organization’s finished order older than 30 days goes with its lines and history; younger, in-flight and other tenants’ orders stay; stock does not move', async () => {
    const free = await organization(db, 'free');
    const widget = await item(db, free, 'W-1', 100);
    const customer = await contact(db, free, 'Kept Customer');
    const delivered = ['confirmed', 'processing', 'shipped', 'delivered'];
    const oldDelivered = await order(db, free, widget, 2, delivered);
    const recentDelivered = await order(db, free, widget, 1, delivered);
    const oldCancelled = await order(db, free, widget, 4, ['confirmed', 'cancelled']);
    const oldReturned = await order(db, free, widget, 1, ['confirmed', 'processing', 'shipped', 'returned']);
    const oldConfirmed = await order(db, free, widget, 3, ['confirmed']); // holds a reservation
    const oldPending = await order(db, free, widget, 5, []);
    const oldShipped = await order(db, free, widget, 1, ['confirmed', 'processing', 'shipped']);
    await ageOrder(oldDelivered, 31);
    await ageOrder(recentDelivered, 29);
    await ageOrder(oldCancelled, 31);
    await ageOrder(oldReturned, 40);
    for (const id of [oldConfirmed, oldPending, oldShipped]) await ageOrder(id, 90);
    await backdate(db, 'public.contacts', ['created_at', 'updated_at'], 400, 'id = $1', [customer]);
    await backdate(db, 'public.inventory_items', ['created_at', 'updated_at'], 400, 'id = $1', [widget]);

    const scale = await organization(db, 'scale');
    const gadget = await item(db, scale, 'G-1', 10);
    const scaleKept = await order(db, scale, gadget, 1, delivered);
    const scaleAncient = await order(db, scale, gadget, 1, delivered);
    await ageOrder(scaleKept, 100);
    await ageOrder(scaleAncient, 2556);
    const stockBefore = [await stockOf(widget), await stockOf(gadget)];
    expect(stockBefore[0]).toEqual([{ quantity_on_hand: 96, quantity_reserved: 3 }]);

    const report = await purge();

    expect(report.orders).toBeGreaterThanOrEqual(4);
    for (const gone of [oldDelivered, oldCancelled, oldReturned, scaleAncient]) {
      expect(await exists('public.orders', gone), gone).toBe(false);
      expect(await count(db, 'public.order_items where order_id = $1', [gone])).toBe(0);
      expect(await count(db, 'public.order_status_events where order_id = $1', [gone])).toBe(0);
    }
    for (const kept of [recentDelivered, oldConfirmed, oldPending, oldShipped, scaleKept]) {
      expect(await exists('public.orders', kept), kept).toBe(true);
      expect(await count(db, 'public.order_items where order_id = $1', [kept])).toBe(1);
      expect(await count(db, 'public.order_status_events where order_id = $1', [kept])).toBeGreaterThan(0);
    }
    expect(await exists('public.contacts', customer)).toBe(true);
    expect(await exists('public.inventory_items', widget)).toBe(true);
    expect([await stockOf(widget), await stockOf(gadget)]).toEqual(stockBefore);
  });
});

describe('conversations and messages', () => {
  it('old messages go, also inside a live conversation; a conversation whose last activity is older goes; contacts, accounts and another tenant’s stay', async () => {
    const free = await organization(db, 'free');
    const acc = await account(db, free, `wa-free-${Date.now()}`);
    const ada = await contact(db, free, 'Ada');
    const bob = await contact(db, free, 'Bob');
    const live = await conversation(db, free, acc, ada);
    const oldInLive = await message(db, free, live, acc, 'from last month');
    const newInLive = await message(db, free, live, acc, 'from today');
    await backdate(db, 'public.messages', ['created_at'], 31, 'id = $1', [oldInLive]);
    const dormant = await conversation(db, free, acc, bob);
    const oldInDormant = await message(db, free, dormant, acc, 'long ago');
    await backdate(db, 'public.messages', ['created_at'], 45, 'id = $1', [oldInDormant]);
    await backdate(db, 'public.conversations', ['created_at', 'last_message_at'], 45, 'id = $1', [dormant]);

    const scale = await organization(db, 'scale');
    const scaleAcc = await account(db, scale, `wa-scale-${Date.now()}`);
    const scaleConv = await conversation(db, scale, scaleAcc, await contact(db, scale, 'Cy'));
    const scaleMsg = await message(db, scale, scaleConv, scaleAcc, 'a hundred days ago');
    await backdate(db, 'public.messages', ['created_at'], 100, 'id = $1', [scaleMsg]);
    await backdate(db, 'public.conversations', ['last_message_at'], 100, 'id = $1', [scaleConv]);

    const report = await purge();

    expect(report.messages).toBeGreaterThanOrEqual(2);
    expect(report.conversations).toBeGreaterThanOrEqual(1);
    expect(await exists('public.messages', oldInLive)).toBe(false);
    expect(await exists('public.messages', newInLive)).toBe(true);
    expect(await exists('public.conversations', live)).toBe(true);
    expect(await exists('public.messages', oldInDormant)).toBe(false);
    expect(await exists('public.conversations', dormant)).toBe(false);
    expect(await exists('public.contacts', bob)).toBe(true);
    expect(await exists('app.connected_accounts', acc)).toBe(true);
    expect(await exists('public.messages', scaleMsg)).toBe(true);
    expect(await exists('public.conversations', scaleConv)).toBe(true);
  });
});

describe('webhook inbox', () => {
  it('events older than their organization’s retention go, and a delivery goes once no event is left; a delivery another tenant still keeps stays', async () => {
    const free = await organization(db, 'free');
    const scale = await organization(db, 'scale');
    const tag = `${Date.now()}`;
    const shared = await delivery(db, `shared-${tag}`);
    const freeOld = await webhookEvent(db, free, shared, `shared-${tag}`);
    const scaleOld = await webhookEvent(db, scale, shared, `shared-${tag}`);
    const alone = await delivery(db, `alone-${tag}`);
    const aloneEvent = await webhookEvent(db, free, alone, `alone-${tag}`);
    const fresh = await delivery(db, `fresh-${tag}`);
    const freshEvent = await webhookEvent(db, free, fresh, `fresh-${tag}`);
    const orphanOld = await delivery(db, `orphan-old-${tag}`); // its events went with a deleted organization
    const orphanNew = await delivery(db, `orphan-new-${tag}`);
    const ids = [shared, alone, orphanOld];
    await backdate(db, 'app.webhook_deliveries', ['received_at'], 31, 'id = any($1)', [ids]);
    await backdate(db, 'app.webhook_events', ['received_at'], 31, 'delivery = any($1)', [ids]);
    await backdate(db, 'app.webhook_events', ['received_at'], 5, 'id = $1', [freshEvent]);

    const report = await purge();

    expect(report.webhook_events).toBeGreaterThanOrEqual(2);
    expect(report.webhook_deliveries).toBeGreaterThanOrEqual(2);
    expect(await exists('app.webhook_events', freeOld)).toBe(false);
    expect(await exists('app.webhook_events', aloneEvent)).toBe(false);
    expect(await exists('app.webhook_deliveries', alone)).toBe(false);
    expect(await exists('app.webhook_deliveries', orphanOld)).toBe(false);
    expect(await exists('app.webhook_events', scaleOld)).toBe(true);
    expect(await exists('app.webhook_deliveries', shared)).toBe(true);
    expect(await exists('app.webhook_events', freshEvent)).toBe(true);
    expect(await exists('app.webhook_deliveries', fresh)).toBe(true);
    expect(await exists('app.webhook_deliveries', orphanNew)).toBe(true);
  });
});

describe('agent sign-in attempts', () => {
  it('go after the organization’s retention; those naming no organization after the shortest (30 days)', async () => {
    const free = await organization(db, 'free');
    const scale = await organization(db, 'scale');
    const made = {
      freeOld: await attempt(db, free),
      freeNew: await attempt(db, free),
      scaleOld: await attempt(db, scale),
      unknownOld: await attempt(db, null),
      unknownNew: await attempt(db, null),
    };
    const age = (id: number, days: number) =>
      backdate(db, 'public.agent_auth_attempts', ['created_at'], days, 'id = $1', [id]);
    await age(made.freeOld, 31);
    await age(made.freeNew, 29);
    await age(made.scaleOld, 100);
    await age(made.unknownOld, 31);
    await age(made.unknownNew, 29);

    const report = await purge();

    expect(report.agent_auth_attempts).toBeGreaterThanOrEqual(2);
    expect(await exists('public.agent_auth_attempts', made.freeOld)).toBe(false);
    expect(await exists('public.agent_auth_attempts', made.unknownOld)).toBe(false);
    expect(await exists('public.agent_auth_attempts', made.freeNew)).toBe(true);
    expect(await exists('public.agent_auth_attempts', made.scaleOld)).toBe(true);
    expect(await exists('public.agent_auth_attempts', made.unknownNew)).toBe(true);
  });
});

describe('batches', () => {
  it('one statement deletes at most the batch size; the purge repeats until everything expired is gone', async () => {
    const starter = await organization(db, 'starter');
    const widget = await item(db, starter, 'B-1', 50);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await order(db, starter, widget, 1, ['cancelled']));
    for (const id of ids) await ageOrder(id, 366);

    const one = await db.query<{ table_name: string; deleted: number | string }>(
      "select table_name, deleted::int as deleted from app.purge_expired('orders', now(), 2)",
    );
    expect(Object.fromEntries(one.map((r) => [r.table_name, Number(r.deleted)]))).toEqual({
      orders: 2,
      order_items: 2,
      order_status_events: 4, // created, cancelled
    });

    const report = await purge(2);
    expect(report.orders).toBe(3);
    expect(report.order_items).toBe(3);
    expect(await count(db, 'public.orders where id = any($1)', [ids])).toBe(0);
  });
});

describe('locks', () => {
  // Two connections at once: PostgreSQL only (PGlite has one, and runs one transaction at a time).
  it.runIf(onPostgres())(
    'a row another transaction holds is skipped, not waited on, and goes on the next run',
    async () => {
      const free = await organization(db, 'free');
      const widget = await item(db, free, 'L-1', 5);
      const held = await order(db, free, widget, 1, ['cancelled']);
      const free2 = await order(db, free, widget, 1, ['cancelled']);
      await ageOrder(held, 31);
      await ageOrder(free2, 31);
      const other = openPostgres(svc.databaseUrl as string, 1);
      try {
        await other.transaction(async (tx) => {
          await tx.query('select 1 from public.orders where id = $1 for update', [held]);
          await purge();
          expect(await exists('public.orders', free2)).toBe(false);
          expect(await exists('public.orders', held)).toBe(true);
        });
      } finally {
        await other.close();
      }
      await purge();
      expect(await exists('public.orders', held)).toBe(false);
    },
  );
});

describe('social posts', () => {
  it('published and failed posts older than the retention go with their media rows and files; younger ones and drafts stay', async () => {
    const free = await organization(db, 'free');
    const page = await account(db, free, `page-${Date.now()}`);
    await db.query("update app.connected_accounts set provider = 'facebook' where id = $1", [page]);
    const post = async (status: string, days: number) => {
      const [p] = await db.query<{ id: string }>(
        `insert into public.social_posts (organization_id, platform, account_id, status, message, published_at)
         values ($1, 'facebook', $2, $3, 'Retention', case when $3 = 'published' then now() end) returning id`,
        [free, page, status],
      );
      const id = p?.id as string;
      const path = `${free}/posts/${id}.png`;
      await svc.services.storage.put(`social-media/${path}`, new Uint8Array([1, 2, 3]), 'image/png');
      await db.query(
        `insert into public.social_post_media (organization_id, post_id, position, storage_path, mime_type, bytes)
         values ($1, $2, 1, $3, 'image/png', 3)`,
        [free, id, path],
      );
      await backdate(db, 'public.social_posts', ['created_at', 'updated_at'], days, 'id = $1', [id]);
      return { id, key: `social-media/${path}` };
    };
    const oldPublished = await post('published', 31);
    const oldFailed = await post('failed', 45);
    const recent = await post('published', 29);
    const oldDraft = await post('draft', 90);
    const report = await purge();
    expect(report.social_posts).toBeGreaterThanOrEqual(2);
    for (const gone of [oldPublished, oldFailed]) {
      expect(await exists('public.social_posts', gone.id)).toBe(false);
      expect(await svc.services.storage.head(gone.key)).toBeNull();
    }
    for (const kept of [recent, oldDraft]) {
      expect(await exists('public.social_posts', kept.id)).toBe(true);
      expect(await svc.services.storage.head(kept.key)).not.toBeNull();
    }
    expect(await count(db, 'public.social_post_media where post_id = $1', [oldPublished.id])).toBe(0);
  });
});

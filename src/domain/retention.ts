import type { Database } from '../platform/db/database.ts';
import type { ObjectStore } from '../platform/storage/object-store.ts';
import { SOCIAL_MEDIA_BUCKET } from './media-bucket.ts';

// The retention purge (docs/retention.md): which rows are expired is decided in SQL
// (app.purge_expired, migrations/0021_retention.sql); this module calls it one batch at a time,
// each batch its own transaction, so no statement holds many row locks or runs long. Takes the
// owner's database (the service path) and the moment to measure ages from; gives back how many
// rows of each table went.

/**
 * What the purge visits, in this order: messages before their conversations (so a conversation's
 * delete cascades to few rows). Social posts come last (purgeSocialPosts): their files go too.
 */
export const PURGE_KINDS = [
  'messages',
  'conversations',
  'orders',
  'webhook_events',
  'webhook_deliveries',
  'agent_auth_attempts',
] as const;

/** Every table the purge deletes from, with the rows deleted: the report of `svc purge`. */
export type PurgeReport = Record<
  (typeof PURGE_KINDS)[number] | 'order_items' | 'order_status_events' | 'social_posts' | 'social_post_media',
  number
>;

export async function purgeExpired(
  db: Database,
  opts: { at: Date; batchSize: number; storage: Pick<ObjectStore, 'remove'> },
): Promise<PurgeReport> {
  const report: PurgeReport = {
    messages: 0,
    conversations: 0,
    orders: 0,
    order_items: 0,
    order_status_events: 0,
    webhook_events: 0,
    webhook_deliveries: 0,
    agent_auth_attempts: 0,
    social_posts: 0,
    social_post_media: 0,
  };
  for (const kind of PURGE_KINDS) {
    // A batch that comes back full may have left more; a short one means done (or the rest is
    // held by a transaction right now, and goes on the next run).
    for (let full = true; full; ) {
      const rows = await db.query<{ table_name: keyof PurgeReport; deleted: number | string }>(
        'select table_name, deleted from app.purge_expired($1, $2, $3)',
        [kind, opts.at, opts.batchSize],
      );
      full = false;
      for (const { table_name, deleted } of rows) {
        report[table_name] += Number(deleted);
        if (table_name === kind) full = Number(deleted) >= opts.batchSize;
      }
    }
  }
  for (let full = true; full; ) {
    const { posts, files } = await purgeSocialPosts(db, opts);
    report.social_posts += posts;
    report.social_post_media += files;
    full = posts >= opts.batchSize;
  }
  return report;
}

/**
 * One batch of published and failed posts whose last change is older than the retention, with
 * their media rows (cascade), then their files in the bucket once the delete has committed. Drafts
 * and scheduled posts are work in progress and stay. A file the store fails to remove is left
 * behind (the error is thrown after the rows are gone, and the next run cannot find it again).
 */
async function purgeSocialPosts(
  db: Database,
  opts: { at: Date; batchSize: number; storage: Pick<ObjectStore, 'remove'> },
): Promise<{ posts: number; files: number }> {
  const rows = await db.query<{ paths: string[] }>(
    `with doomed as (
       select p.organization_id, p.id from app.retention r
        cross join lateral (
          select x.organization_id, x.id from public.social_posts x
           where x.organization_id = r.organization_id and x.status in ('published', 'failed')
             and x.updated_at < $1::timestamptz - r.keep
           limit $2 for update of x skip locked) p
        limit $2)
     delete from public.social_posts t using doomed d
      where t.organization_id = d.organization_id and t.id = d.id
     returning (select coalesce(array_agg(m.storage_path), '{}') from public.social_post_media m
                 where m.organization_id = t.organization_id and m.post_id = t.id) as paths`,
    [opts.at, opts.batchSize],
  );
  const keys = rows.flatMap((r) => r.paths.map((p) => `${SOCIAL_MEDIA_BUCKET}/${p}`));
  if (keys.length) await opts.storage.remove(keys);
  return { posts: rows.length, files: keys.length };
}

/** What agent-usage and svc://organization/info say about retention: short, agents pay per token. */
export function retentionNote(days: number) {
  return {
    days,
    message: `Finished orders, published or failed social posts, conversations, messages, webhook events and agent sign-in logs older than ${days} days are deleted daily; contacts and inventory are kept.`,
  };
}

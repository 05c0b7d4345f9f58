import type { Database } from '../platform/db/database.ts';

// The retention purge (docs/retention.md): which rows are expired is decided in SQL
// (app.purge_expired, migrations/0021_retention.sql); this module calls it one batch at a time,
// each batch its own transaction, so no statement holds many row locks or runs long. Takes the
// owner's database (the service path) and the moment to measure ages from; gives back how many
// rows of each table went.

/**
 * What the purge visits, in this order: messages before their conversations (so a conversation's
 * delete cascades to few rows). Social posts join once their media files go with them.
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
  (typeof PURGE_KINDS)[number] | 'order_items' | 'order_status_events',
  number
>;

export async function purgeExpired(
  db: Database,
  opts: { at: Date; batchSize: number },
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
  return report;
}

/** What agent-usage and svc://organization/info say about retention: short, agents pay per token. */
export function retentionNote(days: number) {
  return {
    days,
    message: `Finished orders, conversations, messages, webhook events and agent sign-in logs older than ${days} days are deleted daily; contacts and inventory are kept.`,
  };
}

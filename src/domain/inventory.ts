import type { z } from 'zod';
import type { Principal } from '../platform/db/database.ts';
import { Params } from '../platform/db/params.ts';
import { notFound } from '../platform/errors.ts';
import type { Deps } from './deps.ts';
import { likeEscape, listPage } from './pagination.ts';
import { InventorySummary, type StockLevel } from './records.ts';
import { searchCandidates } from './search-candidates.ts';

export type InventoryFilter = {
  name?: string;
  sku?: string;
  status?: 'active' | 'draft' | 'archived';
  low_stock?: boolean;
  limit: number;
  cursor?: string;
};

// Available may go negative: orders confirmed beyond what is on hand are backordered.
const AVAILABLE = '(i.quantity_on_hand - i.quantity_reserved)';

export async function listInventory(deps: Pick<Deps, 'db'>, principal: Principal, f: InventoryFilter) {
  const p = new Params();
  const where: string[] = [];
  if (f.name) where.push(`i.name ilike ${p.add(`%${likeEscape(f.name.trim())}%`)}`);
  if (f.sku) where.push(`lower(i.sku) = lower(${p.add(f.sku.trim())})`);
  if (f.status) where.push(`i.status = ${p.add(f.status)}`);
  if (f.low_stock === true) where.push(`${AVAILABLE} <= i.reorder_point`);
  if (f.low_stock === false) where.push(`${AVAILABLE} > i.reorder_point`);
  const { items, next_cursor } = await listPage(deps, principal, {
    from: 'public.inventory_items i',
    alias: 'i',
    row: `to_jsonb(i) || jsonb_build_object('available', ${AVAILABLE})`,
    where,
    p,
    cursor: f.cursor,
    limit: f.limit,
    // The name's candidates come from the trigram index first; the condition above decides.
    narrow: f.name ? (tx) => searchCandidates(tx, 'inventory_items', 'i', [f.name as string], p) : undefined,
  });
  return { items: items.map((i) => InventorySummary.parse(i)), next_cursor };
}

/** Stock of one item, by id or SKU: what is on hand, held by orders, free to sell, and owed. */
export async function checkStock(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  by: { item_id: string } | { sku: string },
) {
  const [column, value] =
    'item_id' in by ? ['i.id', by.item_id] : ['lower(i.sku)', by.sku.trim().toLowerCase()];
  const [row] = await deps.db.asPrincipal(
    principal,
    (tx) =>
      tx.query<{ r: z.infer<typeof StockLevel> }>(
        `select jsonb_build_object('item_id', i.id, 'name', i.name, 'sku', i.sku, 'status', i.status,
                  'warehouse_id', i.warehouse_id, 'quantity_on_hand', i.quantity_on_hand,
                  'quantity_reserved', i.quantity_reserved, 'available', ${AVAILABLE},
                  'backordered', greatest(0, -${AVAILABLE}), 'reorder_point', i.reorder_point,
                  'needs_reorder', ${AVAILABLE} <= i.reorder_point) as r
           from public.inventory_items i where ${column} = $1`,
        [value],
      ),
    { readOnly: true },
  );
  if (!row) throw notFound('inventory item');
  return row.r;
}

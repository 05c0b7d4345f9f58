import type { Database, Principal } from '../platform/db/database.ts';
import { notFound } from '../platform/errors.ts';
import { keyset, likeEscape, page } from './pagination.ts';
import { InventorySummary } from './records.ts';

type Deps = { db: Database };

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

export async function listInventory(deps: Deps, principal: Principal, f: InventoryFilter) {
  const where: string[] = [];
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (f.name) where.push(`i.name ilike ${bind(`%${likeEscape(f.name.trim())}%`)}`);
  if (f.sku) where.push(`lower(i.sku) = lower(${bind(f.sku.trim())})`);
  if (f.status) where.push(`i.status = ${bind(f.status)}`);
  if (f.low_stock === true) where.push(`${AVAILABLE} <= i.reorder_point`);
  if (f.low_stock === false) where.push(`${AVAILABLE} > i.reorder_point`);
  const tail = keyset('i', f.cursor, f.limit, where, params);
  const rows = await deps.db.asPrincipal(
    principal,
    (tx) =>
      tx.query<{ r: { created_at: string; id: string } }>(
        `select to_jsonb(i) || jsonb_build_object('available', ${AVAILABLE}) as r from public.inventory_items i
          ${where.length ? `where ${where.join(' and ')}` : ''} ${tail}`,
        params,
      ),
    { readOnly: true },
  );
  const { items, next_cursor } = page(
    rows.map((x) => x.r),
    f.limit,
  );
  return { items: items.map((i) => InventorySummary.parse(i)), next_cursor };
}

/** Stock of one item, by id or SKU: what is on hand, held by orders, free to sell, and owed. */
export async function checkStock(
  deps: Deps,
  principal: Principal,
  by: { item_id: string } | { sku: string },
) {
  const [column, value] =
    'item_id' in by ? ['i.id', by.item_id] : ['lower(i.sku)', by.sku.trim().toLowerCase()];
  const [row] = await deps.db.asPrincipal(
    principal,
    (tx) =>
      tx.query<{ r: Record<string, unknown> }>(
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

/** An inventory item as /rest/v1 returns it (docs/data-model.md, `inventory_items`). */
export type Item = {
  id: string;
  name: string;
  sku: string | null;
  description: string | null;
  unit_price: number;
  currency: string;
  quantity_on_hand: number;
  quantity_reserved: number;
  reorder_point: number;
  status: 'active' | 'draft' | 'archived';
  auto_created: boolean;
  created_at: string;
  updated_at: string;
};

export const ITEM_COLUMNS =
  'id, name, sku, description, unit_price, currency, quantity_on_hand, quantity_reserved, reorder_point, status, auto_created, created_at, updated_at';

/**
 * Stock as svc_check_stock reports it (src/domain/inventory.ts): available = on hand − reserved,
 * which may go negative (backordered); low stock when available is at or below the reorder point.
 */
export function stockOf(i: Pick<Item, 'quantity_on_hand' | 'quantity_reserved' | 'reorder_point'>) {
  const available = i.quantity_on_hand - i.quantity_reserved;
  return { available, backordered: Math.max(0, -available), low: available <= i.reorder_point };
}

/** What the item form edits, as typed; the database checks the numbers (and says why it refuses). */
export type ItemInput = {
  name: string;
  sku: string;
  description: string;
  unit_price: string;
  currency: string;
  quantity_on_hand: string;
  reorder_point: string;
};

const num = (s: string) => (s.trim() === '' ? 0 : Number(s));

export const toRow = (f: ItemInput) => ({
  name: f.name.trim(),
  sku: f.sku.trim() || null,
  description: f.description.trim() || null,
  unit_price: num(f.unit_price),
  currency: f.currency.trim().toUpperCase() || 'USD',
  quantity_on_hand: num(f.quantity_on_hand),
  reorder_point: num(f.reorder_point),
});

export const toForm = (i?: Item): ItemInput => ({
  name: i?.name ?? '',
  sku: i?.sku ?? '',
  description: i?.description ?? '',
  unit_price: i ? String(i.unit_price) : '',
  currency: i?.currency ?? 'USD',
  quantity_on_hand: i ? String(i.quantity_on_hand) : '0',
  reorder_point: i ? String(i.reorder_point) : '0',
});

export const STATUS_LABELS: Record<Item['status'], string> = {
  active: 'Active',
  draft: 'Draft',
  archived: 'Archived',
};

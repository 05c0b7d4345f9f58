import { z } from 'zod';
import { checkStock, listInventory } from '../../domain/inventory.ts';
import { INVENTORY_STATUSES, InventorySummary, StockLevel } from '../../domain/records.ts';
import { defineTool } from '../tool.ts';
import { cursor, limit, nextCursor, READ } from './common.ts';

export const listInventoryTool = defineTool({
  name: 'svc_list_inventory',
  title: 'List inventory',
  description:
    'Browse inventory newest first by part of name, exact SKU, status (draft: auto-created from orders, awaiting review) or low stock. Returns {items, next_cursor} with on hand, reserved and available.',
  scope: 'read',
  input: z.strictObject({
    name: z.string().max(300).optional(),
    sku: z.string().max(100).optional(),
    status: z.enum(INVENTORY_STATUSES).optional(),
    low_stock: z.boolean().optional().describe('Only items at or below their reorder point'),
    limit: limit(),
    cursor: cursor(),
  }),
  output: z.object({ items: z.array(InventorySummary), next_cursor: nextCursor() }),
  records: 'inventory',
  annotations: READ,
  run: ({ s, principal }, args) => listInventory(s, principal, args),
});

export const checkStockTool = defineTool({
  name: 'svc_check_stock',
  title: 'Check stock',
  description:
    'Whether one item (by item_id or sku) can be sold. Returns quantity_on_hand, quantity_reserved, available, backordered and needs_reorder.',
  scope: 'read',
  input: z
    .strictObject({
      item_id: z.guid().optional(),
      sku: z.string().min(1).max(100).optional(),
    })
    .refine((a) => !a.item_id !== !a.sku, {
      path: ['item_id'],
      message: 'Give exactly one of item_id or sku',
    }),
  output: StockLevel,
  records: 'inventory',
  annotations: READ,
  run: ({ s, principal }, { item_id, sku }) =>
    checkStock(s, principal, item_id ? { item_id } : { sku: sku as string }),
});

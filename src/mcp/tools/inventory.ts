import { z } from 'zod';
import { checkStock, listInventory } from '../../domain/inventory.ts';
import { INVENTORY_STATUSES, InventorySummary, StockLevel } from '../../domain/records.ts';
import { defineTool } from '../tool.ts';
import { cursor, limit, nextCursor, READ } from './common.ts';

export const listInventoryTool = defineTool({
  name: 'svc_list_inventory',
  title: 'List inventory',
  description:
    'Lists inventory items newest first, filtered by name, SKU, status or low stock (available at or below the reorder point). Draft items with auto_created were made from order lines that matched nothing and await review. Returns compact items with on hand, reserved and available quantities, and next_cursor.',
  scope: 'read',
  input: z.object({
    name: z.string().max(300).optional().describe('Part of the item name'),
    sku: z.string().max(100).optional().describe('Exact SKU (case-insensitive)'),
    status: z.enum(INVENTORY_STATUSES).optional().describe('active, draft (awaiting review) or archived'),
    low_stock: z.boolean().optional().describe('true: only items at or below their reorder point'),
    limit: limit(),
    cursor: cursor(),
  }),
  output: z.object({ items: z.array(InventorySummary), next_cursor: nextCursor() }),
  annotations: READ,
  run: ({ s, principal }, args) => listInventory(s, principal, args),
});

export const checkStockTool = defineTool({
  name: 'svc_check_stock',
  title: 'Check stock',
  description:
    'Tells how much of one item is on hand, reserved by confirmed orders, available to sell and backordered, and whether it is at its reorder point. Identify the item by item_id or by sku.',
  scope: 'read',
  input: z
    .object({
      item_id: z.guid().optional().describe('The inventory item’s id'),
      sku: z.string().min(1).max(100).optional().describe('The item’s SKU'),
    })
    .refine((a) => !a.item_id !== !a.sku, {
      path: ['item_id'],
      message: 'Give exactly one of item_id or sku',
    }),
  output: StockLevel,
  annotations: READ,
  run: ({ s, principal }, { item_id, sku }) =>
    checkStock(s, principal, item_id ? { item_id } : { sku: sku as string }),
});

import { createColumnHelper } from '@tanstack/react-table';
import { Link } from 'react-router';
import { money } from '../../lib/format';
import { DataTable } from '../../ui/DataTable';
import { linkNote, type OrderLine } from './order';

const col = createColumnHelper<OrderLine>();

/** An order's lines with the inventory item each is linked to, and the links to review. */
export function OrderLines({ lines, currency }: { lines: OrderLine[]; currency: string }) {
  const columns = [
    col.accessor('name', { header: 'Item' }),
    col.accessor('sku', { header: 'SKU', cell: (c) => c.getValue() ?? '—' }),
    col.accessor('quantity', { header: 'Quantity' }),
    col.accessor('unit_price', { header: 'Unit price', cell: (c) => money(c.getValue(), currency) }),
    col.accessor('total', { header: 'Line total', cell: (c) => money(c.getValue(), currency) }),
    col.display({
      id: 'inventory',
      header: 'Inventory',
      cell: ({ row }) => {
        const item = row.original.inventory_items;
        const note = linkNote(row.original);
        if (!item) return <span className="badge warn">{note}</span>;
        return (
          <>
            <Link to={`/app/inventory/${item.id}`}>
              {item.sku ? `${item.name} (${item.sku})` : item.name}
            </Link>
            {note && (
              <>
                {' '}
                <span className="badge draft">{note}</span>
              </>
            )}
          </>
        );
      },
    }),
  ];
  const sorted = [...lines].sort((a, b) => (a.line_number ?? 0) - (b.line_number ?? 0));
  return <DataTable rows={sorted} columns={columns} caption="Order lines" empty="This order has no lines" />;
}

import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { Link } from 'react-router';
import { money } from '../../lib/format';
import { useInsertAndOpen } from '../../lib/insert-and-open';
import { useKeysetList } from '../../lib/keyset-list';
import { useUrlFilters } from '../../lib/url-filters';
import { Page } from '../../ui/Page';
import { PagedTable } from '../../ui/PagedTable';
import { ItemForm } from './ItemForm';
import { ITEM_COLUMNS, type Item, stockOf, toForm, toRow } from './item';
import { ItemBadges } from './StockCells';
import '../orders/orders.css';

const PAGE_SIZE = 25;
const col = createColumnHelper<Item>();
const columns = [
  col.accessor('name', {
    header: 'Item',
    cell: (c) => <Link to={`/app/inventory/${c.row.original.id}`}>{c.getValue()}</Link>,
  }),
  col.accessor('sku', { header: 'SKU', cell: (c) => c.getValue() ?? '—' }),
  col.display({ id: 'status', header: 'Status', cell: ({ row }) => <ItemBadges item={row.original} /> }),
  col.accessor('quantity_on_hand', { header: 'On hand' }),
  col.accessor('quantity_reserved', { header: 'Reserved' }),
  col.display({ id: 'available', header: 'Available', cell: ({ row }) => stockOf(row.original).available }),
  col.display({
    id: 'backordered',
    header: 'Backordered',
    cell: ({ row }) => stockOf(row.original).backordered,
  }),
  col.accessor('unit_price', { header: 'Price', cell: (c) => money(c.getValue(), c.row.original.currency) }),
];

/** The list's views: what is on sale, the drafts orders created for review, the archive. */
const VIEWS = {
  active: { label: 'Active', empty: 'No active items match' },
  review: { label: 'Drafts to review', empty: 'No drafts wait for review' },
  archived: { label: 'Archived', empty: 'No archived items match' },
  all: { label: 'All', empty: 'No items match' },
} as const;
type View = keyof typeof VIEWS;

// PostgREST's or=() takes a comma-separated list: characters that would break it are dropped.
const searchable = (s: string) => s.replace(/[,()*\\]/g, ' ').trim();

export function InventoryPage() {
  const filters = useUrlFilters();
  const search = filters.get('q');
  const view: View = (filters.get('view') as View) in VIEWS ? (filters.get('view') as View) : 'active';
  const [adding, setAdding] = useState(false);

  const list = useKeysetList<Item>({
    key: ['inventory', { search, view }],
    table: 'inventory_items',
    select: ITEM_COLUMNS,
    pageSize: PAGE_SIZE,
    filter: (q) => {
      const term = searchable(search);
      if (term) q = q.or(`name.ilike.*${term}*,sku.ilike.*${term}*`);
      if (view === 'active') q = q.eq('status', 'active');
      if (view === 'archived') q = q.eq('status', 'archived');
      if (view === 'review') q = q.eq('status', 'draft').eq('auto_created', true);
      return q;
    },
    position: filters.position,
    go: filters.go,
  });
  const create = useInsertAndOpen('inventory_items', toRow, 'inventory', '/app/inventory');
  const { set } = filters;

  return (
    <Page
      title="Inventory"
      actions={
        <button type="button" className="primary" aria-expanded={adding} onClick={() => setAdding(!adding)}>
          New item
        </button>
      }
    >
      {adding && (
        <section className="panel" aria-label="New item">
          <ItemForm
            initial={toForm()}
            submitLabel="Add item"
            pending={create.isPending}
            error={create.error}
            onSubmit={(f) => create.mutate(f)}
          />
        </section>
      )}
      <nav className="filters" aria-label="Inventory views">
        {(Object.keys(VIEWS) as View[]).map((v) => (
          <Link
            key={v}
            to={`?${new URLSearchParams({ ...(search ? { q: search } : {}), view: v })}`}
            replace
            aria-current={v === view ? 'page' : undefined}
            className={v === view ? 'button primary' : 'button'}
          >
            {VIEWS[v].label}
          </Link>
        ))}
      </nav>
      <search className="filters">
        <label>
          Search name or SKU
          <input type="search" defaultValue={search} onChange={(e) => set('q', e.target.value)} />
        </label>
      </search>
      <PagedTable
        {...list}
        columns={columns}
        caption={`Inventory: ${VIEWS[view].label}`}
        empty={VIEWS[view].empty}
      />
    </Page>
  );
}

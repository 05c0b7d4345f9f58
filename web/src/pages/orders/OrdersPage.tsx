import { createColumnHelper } from '@tanstack/react-table';
import { Link } from 'react-router';
import { dateTime, money, personName } from '../../lib/format';
import { useKeysetList } from '../../lib/keyset-list';
import { type SortColumn, useListSort } from '../../lib/list-sort';
import { useUrlFilters } from '../../lib/url-filters';
import { ExportCsv, exportQuery } from '../../ui/ExportCsv';
import { FilterSelect } from '../../ui/FilterSelect';
import { Page } from '../../ui/Page';
import { PagedTable } from '../../ui/PagedTable';
import { ORDER_STATUSES, statusLabel } from './lifecycle';
import { LIST_COLUMNS, type Order, type OrderContact } from './order';
import './orders.css';

const PAGE_SIZE = 25;
type Row = Pick<
  Order,
  'id' | 'order_number' | 'status' | 'currency' | 'total' | 'customer_name' | 'created_at'
> & {
  contacts: OrderContact | null;
};
const col = createColumnHelper<Row>();
const columns = [
  col.accessor('order_number', {
    header: 'Order',
    cell: (c) => <Link to={`/app/orders/${c.row.original.id}`}>{c.getValue()}</Link>,
  }),
  col.accessor('status', {
    header: 'Status',
    cell: (c) => <span className={`badge status-${c.getValue()}`}>{statusLabel(c.getValue())}</span>,
  }),
  col.display({
    id: 'customer',
    header: 'Customer',
    cell: ({ row }) =>
      row.original.contacts ? personName(row.original.contacts) : (row.original.customer_name ?? '—'),
  }),
  col.accessor('total', { header: 'Total', cell: (c) => money(c.getValue(), c.row.original.currency) }),
  col.accessor('created_at', { header: 'Created', cell: (c) => dateTime(c.getValue()) }),
];

/**
 * The orders a person can ask for by a header (docs/decisions.md, "Sorting the contacts and orders
 * tables"): each is a range of an index under row-level security. Not the total: PostgreSQL does
 * not compare numerics inside an index under RLS (not leakproof), so a deep page would read every
 * row before it. The status has its filter; the customer is another table's.
 */
const SORTS: Record<string, SortColumn> = {
  order_number: { header: 'order_number', kind: 'text', nullable: false, first: 'desc' },
  created_at: { header: 'created_at', kind: 'time', nullable: false, first: 'desc' },
};

/** What the export file holds: the order as a person reads it, without internal ids. */
const EXPORT_COLUMNS =
  'order_number,status,customer_name,customer_email,customer_phone,subtotal,tax_total,shipping_total,total,currency,shipping_address,notes,source,created_at';

// Order numbers are ORD- and digits: anything else in the search cannot match and would break ilike.
const numberTerm = (s: string) => s.replace(/[^0-9A-Za-z-]/g, '').trim();

export function OrdersPage() {
  const filters = useUrlFilters();
  const search = filters.get('q');
  const status = filters.get('status');

  const { sort, kind, sorting } = useListSort(filters, SORTS);
  // The list's filters, for its pages and for its export alike.
  const filter = <Q extends { ilike(c: string, p: string): Q; eq(c: string, v: string): Q }>(q: Q): Q => {
    const term = numberTerm(search);
    if (term) q = q.ilike('order_number', `*${term}*`);
    return status ? q.eq('status', status) : q;
  };

  const list = useKeysetList<Row>({
    key: ['orders', { search, status }],
    table: 'orders',
    select: LIST_COLUMNS,
    pageSize: PAGE_SIZE,
    filter,
    sort,
    kind,
    position: filters.position,
    go: filters.go,
  });
  const query = () => exportQuery('orders', EXPORT_COLUMNS, filter, sort);
  const { set } = filters;

  return (
    <Page
      title="Orders"
      actions={
        <>
          <ExportCsv table="orders" query={query} />
          <Link className="button primary" to="/app/orders/new">
            New order
          </Link>
        </>
      }
    >
      <search className="filters">
        <label>
          Order number
          <input type="search" defaultValue={search} onChange={(e) => set('q', e.target.value)} />
        </label>
        <FilterSelect
          label="Status"
          value={status}
          allLabel="All statuses"
          options={ORDER_STATUSES}
          labelOf={statusLabel}
          onChange={(v) => set('status', v)}
        />
      </search>
      <PagedTable {...list} columns={columns} caption="Orders" empty="No orders match" sorting={sorting} />
    </Page>
  );
}

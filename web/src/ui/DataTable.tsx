import { type ColumnDef, flexRender, getCoreRowModel, useReactTable } from '@tanstack/react-table';
import type { Sorting } from '../lib/list-sort';

/**
 * A table of rows; on narrow screens CSS lays each row out as a card (data-label on cells), and
 * the sortable headers stay as a row of buttons above them. A sortable header is a button in the
 * header cell, which says its order with aria-sort (only the sorted one: ARIA's rule).
 */
export function DataTable<T>({
  rows,
  columns,
  caption,
  empty = 'Nothing here yet',
  sorting,
}: {
  rows: T[];
  // biome-ignore lint/suspicious/noExplicitAny: column value types differ per column
  columns: ColumnDef<T, any>[];
  caption: string;
  empty?: string;
  sorting?: Sorting;
}) {
  const table = useReactTable({ data: rows, columns, getCoreRowModel: getCoreRowModel() });
  if (rows.length === 0) return <p className="empty">{empty}</p>;
  return (
    <table className="data">
      <caption className="visually-hidden">{caption}</caption>
      <thead className={sorting ? 'sorting' : undefined}>
        {table.getHeaderGroups().map((group) => (
          <tr key={group.id}>
            {group.headers.map((h) => {
              const label = flexRender(h.column.columnDef.header, h.getContext());
              const by = sorting?.by[h.column.id];
              if (!sorting || !by)
                return (
                  <th key={h.id} scope="col">
                    {label}
                  </th>
                );
              const active = sorting.current.column === by.column;
              const descending = active ? sorting.current.descending : by.first === 'desc';
              return (
                <th
                  key={h.id}
                  scope="col"
                  className="sortable"
                  aria-sort={active ? (descending ? 'descending' : 'ascending') : undefined}
                >
                  <button
                    type="button"
                    className="sort"
                    onClick={() =>
                      sorting.onSort({
                        column: by.column,
                        descending: active ? !sorting.current.descending : by.first === 'desc',
                      })
                    }
                  >
                    {label}
                    <span aria-hidden="true" className={active ? 'arrow on' : 'arrow'}>
                      {active ? (descending ? '↓' : '↑') : '↕'}
                    </span>
                  </button>
                </th>
              );
            })}
          </tr>
        ))}
      </thead>
      <tbody>
        {table.getRowModel().rows.map((row) => (
          <tr key={row.id}>
            {row.getVisibleCells().map((cell) => (
              <td key={cell.id} data-label={String(cell.column.columnDef.header ?? '')}>
                {flexRender(cell.column.columnDef.cell, cell.getContext())}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

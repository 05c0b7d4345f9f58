import { type ColumnDef, flexRender, getCoreRowModel, useReactTable } from '@tanstack/react-table';

/** A table of rows; on narrow screens CSS lays each row out as a card (data-label on cells). */
export function DataTable<T>({
  rows,
  columns,
  caption,
  empty = 'Nothing here yet',
}: {
  rows: T[];
  // biome-ignore lint/suspicious/noExplicitAny: column value types differ per column
  columns: ColumnDef<T, any>[];
  caption: string;
  empty?: string;
}) {
  const table = useReactTable({ data: rows, columns, getCoreRowModel: getCoreRowModel() });
  if (rows.length === 0) return <p className="empty">{empty}</p>;
  return (
    <table className="data">
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        {table.getHeaderGroups().map((group) => (
          <tr key={group.id}>
            {group.headers.map((h) => (
              <th key={h.id} scope="col">
                {flexRender(h.column.columnDef.header, h.getContext())}
              </th>
            ))}
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

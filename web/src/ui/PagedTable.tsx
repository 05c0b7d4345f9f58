import type { ColumnDef } from '@tanstack/react-table';
import { DataTable } from './DataTable';
import { ErrorNote } from './ErrorNote';
import { Loading } from './Page';
import { Pager } from './Pager';

/** A list query's states as every list page shows them: its error, loading, the table and its pages. */
export function PagedTable<T>({
  query,
  page,
  pageSize,
  onPage,
  ...table
}: {
  query: { isPending: boolean; error: unknown; data?: { rows: T[]; total?: number | null } };
  page: number;
  pageSize: number;
  onPage(page: number): void;
  // biome-ignore lint/suspicious/noExplicitAny: column value types differ per column
  columns: ColumnDef<T, any>[];
  caption: string;
  empty?: string;
}) {
  return (
    <>
      <ErrorNote error={query.error} />
      {query.isPending ? (
        <Loading />
      ) : (
        <>
          <DataTable rows={query.data?.rows ?? []} {...table} />
          <Pager page={page} pageSize={pageSize} total={query.data?.total} onPage={onPage} />
        </>
      )}
    </>
  );
}

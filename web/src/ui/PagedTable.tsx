import type { ColumnDef } from '@tanstack/react-table';
import type { Sorting } from '../lib/list-sort';
import { DataTable } from './DataTable';
import { ErrorNote } from './ErrorNote';
import { Loading } from './Page';
import { Pager } from './Pager';

/** A list query's states as every list page shows them: its error, loading, the table and its pages. */
export function PagedTable<T>({
  query,
  rows,
  total,
  about,
  hasMore,
  page,
  pageSize,
  onPage,
  ...table
}: {
  query: { isPending: boolean; error: unknown };
  /** This page's rows, and how many there are in all (when the service says; `about`: an estimate). */
  rows: T[] | undefined;
  total: number | null | undefined;
  about?: boolean;
  /** For cursor lists: whether a next page exists (the total may be an estimate). */
  hasMore?: boolean;
  page: number;
  pageSize: number;
  onPage(page: number): void;
  // biome-ignore lint/suspicious/noExplicitAny: column value types differ per column
  columns: ColumnDef<T, any>[];
  caption: string;
  empty?: string;
  sorting?: Sorting;
}) {
  return (
    <>
      <ErrorNote error={query.error} />
      {query.isPending ? (
        <Loading />
      ) : (
        <>
          <DataTable rows={rows ?? []} {...table} />
          <Pager
            page={page}
            pageSize={pageSize}
            total={total}
            about={about}
            hasMore={hasMore}
            onPage={onPage}
          />
        </>
      )}
    </>
  );
}

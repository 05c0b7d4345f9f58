import { useMutation } from '@tanstack/react-query';
import { ApiError, fromResponse } from '../lib/api';
import type { Sort } from '../lib/keyset';
import { anonKey, supabase } from '../lib/supabase';
import { ErrorNote } from './ErrorNote';

/** What postgrest-js keeps of a query it built: its URL (a protected field, read for its query string). */
type Built = { url: URL };
type ListQuery = ReturnType<ReturnType<typeof supabase.from>['select']>;

/**
 * The query string of a list's read as postgrest-js would send it, with the list's own filters
 * (the same function its pages use) and order, which /functions/v1/export/<table> takes as
 * /rest/v1 does: the file holds what the list shows, every page of it.
 */
export function exportQuery(
  table: string,
  select: string,
  filter: (q: ListQuery) => ListQuery,
  sort: Sort,
): string {
  const q = filter(supabase.from(table).select(select))
    .order(sort.column, { ascending: !sort.descending })
    .order('id', { ascending: !sort.descending });
  return (q as unknown as Built).url.search.slice(1);
}

/** The name the service gave the file (Content-Disposition), or one of our own. */
function filenameOf(res: Response, table: string): string {
  const m = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '');
  return m?.[1] ?? `${table}.csv`;
}

/**
 * "Export CSV": every row the list's filters match, in its order, as one file, in one request
 * (docs/decisions.md, "Exporting a list as CSV"). The file is saved through a link to the
 * downloaded blob: a plain link could not send the bearer token.
 */
export function ExportCsv({ table, query }: { table: string; query: () => string }) {
  const download = useMutation({
    mutationFn: async () => {
      const { data } = await supabase.auth.getSession();
      const token = data.session?.access_token;
      if (!token) throw new ApiError('Sign in again to export');
      const res = await fetch(`/functions/v1/export/${table}?${query()}`, {
        headers: { apikey: anonKey(), authorization: `Bearer ${token}` },
      });
      if (!res.ok) throw await fromResponse(res);
      const url = URL.createObjectURL(await res.blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = filenameOf(res, table);
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    },
  });
  return (
    <>
      <button type="button" onClick={() => download.mutate()} disabled={download.isPending}>
        {download.isPending ? 'Exporting…' : 'Export CSV'}
      </button>
      <ErrorNote error={download.error} />
    </>
  );
}

import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { must } from './api';
import { cursorText, newerThan, olderThan, parseCursor } from './keyset';
import { supabase } from './supabase';

/**
 * Where a keyset list is: the page's number (0-based, for people), its cursor (`after`, empty on
 * the first page), and `back`, the cursors of the pages before it as they were seen, so Previous
 * shows those very pages again. A shared link carries the number and cursor, not `back`.
 */
export type Position = { page: number; after: string; back: string[] };
export const FIRST_PAGE: Position = { page: 0, after: '', back: [] };

/** Up to this many rows `count=estimated` is an exact count; above it, the planner's estimate. */
const EXACT_UP_TO = 1000;

/** A `/rest/v1` read of a table, as `supabase.from(table).select(…)` starts it. */
type ListQuery = ReturnType<ReturnType<typeof supabase.from>['select']>;
type Keyed = { created_at: string; id: string | number };

/**
 * A newest-first list read page by page with a keyset cursor, and its total from
 * `count=estimated`, asked once per set of filters (with the first page, not on every page): the page's rows are
 * `pageSize` plus one, the extra one saying whether there is a next page. `key` names the list and
 * its filters (a filter change gives a new key; the caller resets the position with it).
 */
export function useKeysetList<T extends Keyed>({
  key,
  table,
  select,
  pageSize,
  filter = (q) => q,
  position,
  go,
  staleTime,
}: {
  key: readonly unknown[];
  table: string;
  select: string;
  pageSize: number;
  filter?: (q: ListQuery) => ListQuery;
  position: Position;
  go(next: Position): void;
  staleTime?: number;
}) {
  const queries = useQueryClient();
  const totalKey = [...key, 'total'];
  const rows = useQuery({
    queryKey: [...key, 'after', position.after],
    placeholderData: keepPreviousData,
    staleTime,
    queryFn: async () => {
      const cursor = parseCursor(position.after);
      // The first page brings the total in the same statement; later pages count nothing.
      const q = filter(supabase.from(table).select(select, cursor ? {} : { count: 'estimated' }));
      const res = await (cursor ? olderThan(q, cursor) : q)
        .order('created_at', { ascending: false })
        .order('id', { ascending: false })
        .limit(pageSize + 1);
      const all = must(res) as unknown as T[];
      if (!cursor) queries.setQueryData(totalKey, res.count);
      return { rows: all.slice(0, pageSize), more: all.length > pageSize };
    },
  });
  // A page opened by its link, without the first: the total on its own (a HEAD), once.
  const total = useQuery({
    queryKey: totalKey,
    enabled: position.after !== '',
    staleTime,
    queryFn: async () => {
      const res = await filter(supabase.from(table).select('id', { count: 'estimated', head: true }));
      must(res);
      return res.count;
    },
  });

  const { page, after, back } = position;
  const shown = rows.data?.rows;
  // While the page asked for loads, the rows shown are the last page's: no cursor is taken from them.
  const settled = !rows.isPlaceholderData;
  const next = () => {
    const last = settled ? shown?.at(-1) : undefined;
    if (last) go({ page: page + 1, after: cursorText(last), back: [...back, after] });
  };
  const previous = async () => {
    if (!settled) return;
    if (back.length === page) {
      go({ page: page - 1, after: back.at(-1) ?? '', back: back.slice(0, -1) });
      return;
    }
    // Reached by a link, without the pages before: the page before is the pageSize rows just
    // newer than this page's first, and its cursor the row just newer than those.
    const first = shown?.[0];
    const cursor = first && parseCursor(cursorText(first));
    if (!cursor) return go(FIRST_PAGE);
    const res = await newerThan(filter(supabase.from(table).select('id, created_at')), cursor)
      .order('created_at', { ascending: true })
      .order('id', { ascending: true })
      .limit(pageSize + 1);
    const start = res.error ? undefined : (res.data as unknown as Keyed[])[pageSize];
    go(start ? { page: Math.max(1, page - 1), after: cursorText(start), back: [] } : FIRST_PAGE);
  };

  const count = total.data ?? null;
  return {
    query: rows,
    rows: shown,
    page,
    pageSize,
    hasMore: rows.data?.more ?? false,
    total: count,
    about: count !== null && count > EXACT_UP_TO,
    onPage: (p: number) => (p > page ? next() : void previous()),
  };
}

import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { must } from './api';
import {
  type Cursor,
  cursorText,
  NEWEST_FIRST,
  parseCursor,
  reversed,
  type Sort,
  type SortKind,
  segments,
} from './keyset';
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
type Keyed = { id: string | number };
const CREATED: SortKind = { kind: 'time', nullable: false };

/**
 * The rows of one keyset page: the cursor's segments (keyset.ts) read in turn until `limit` rows
 * are found, usually one request; the first page of a filter set brings its count with it.
 */
async function readPage<T>(
  base: (count: boolean) => ListQuery,
  sort: Sort,
  kind: SortKind,
  cursor: Cursor | null,
  limit: number,
): Promise<{ rows: T[]; count: number | null }> {
  const rows: T[] = [];
  let count: number | null = null;
  for (const seg of segments<ListQuery>(sort, kind, cursor)) {
    const counted = !cursor && rows.length === 0;
    let q = seg.filter(base(counted)) as unknown as ReturnType<ListQuery['order']>;
    for (const o of seg.order) q = q.order(o.column, { ascending: o.ascending });
    const res = await q.limit(limit - rows.length);
    rows.push(...(must(res) as unknown as T[]));
    if (counted) count = res.count;
    if (rows.length >= limit) break;
  }
  return { rows, count };
}

/**
 * A list read page by page with a keyset cursor in `sort`'s order (newest first unless told),
 * and its total from `count=estimated`, asked once per set of filters (with the first page, not on
 * every page): the page's rows are `pageSize` plus one, the extra one saying whether there is a
 * next page. `key` names the list, its filters and its order (a change gives a new key; the
 * caller resets the position with it). The sort column must be among the selected columns.
 */
export function useKeysetList<T extends Keyed>({
  key,
  table,
  select,
  pageSize,
  filter = (q) => q,
  sort = NEWEST_FIRST,
  kind = CREATED,
  position,
  go,
  staleTime,
}: {
  key: readonly unknown[];
  table: string;
  select: string;
  pageSize: number;
  filter?: (q: ListQuery) => ListQuery;
  sort?: Sort;
  kind?: SortKind;
  position: Position;
  go(next: Position): void;
  staleTime?: number;
}) {
  const queries = useQueryClient();
  // The total depends on the filters only: a new order keeps it.
  const totalKey = [...key, 'total'];
  const rows = useQuery({
    queryKey: [...key, 'sort', sort.column, sort.descending, 'after', position.after],
    placeholderData: keepPreviousData,
    staleTime,
    queryFn: async () => {
      const cursor = parseCursor(position.after, kind);
      const base = (count: boolean) =>
        filter(supabase.from(table).select(select, count ? { count: 'estimated' } : {}));
      const { rows: all, count } = await readPage<T>(base, sort, kind, cursor, pageSize + 1);
      if (!cursor) queries.setQueryData(totalKey, count);
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
    if (last) go({ page: page + 1, after: cursorText(last, sort), back: [...back, after] });
  };
  const previous = async () => {
    if (!settled) return;
    if (back.length === page) {
      go({ page: page - 1, after: back.at(-1) ?? '', back: back.slice(0, -1) });
      return;
    }
    // Reached by a link, without the pages before: the page before is the pageSize rows just
    // before this page's first (read in the reverse order), and its cursor the row before those.
    const first = shown?.[0];
    const cursor = first && parseCursor(cursorText(first, sort), kind);
    if (!cursor) return go(FIRST_PAGE);
    const columns = sort.column === 'id' ? 'id' : `id, ${sort.column}`;
    const before = await readPage<Keyed>(
      () => filter(supabase.from(table).select(columns)),
      reversed(sort),
      kind,
      cursor,
      pageSize + 1,
    ).catch(() => ({ rows: [] as Keyed[] }));
    const start = before.rows[pageSize];
    go(start ? { page: Math.max(1, page - 1), after: cursorText(start, sort), back: [] } : FIRST_PAGE);
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

import { NEWEST_FIRST, parseSort, type Sort, type SortKind, sortText } from './keyset';
import type { useUrlFilters } from './url-filters';

/** A column a list may be sorted by: its header (the table column's id), its kind and the direction of a first click. */
export type SortColumn = SortKind & { header: string; first: 'asc' | 'desc' };

/**
 * Headers a list can be sorted by: the table column's id → the database column it sorts and the
 * direction a first click asks for (A→Z for words, newest first for times and order numbers).
 */
export type Sorting = {
  by: Record<string, { column: string; first: 'asc' | 'desc' }>;
  current: Sort;
  onSort(next: Sort): void;
};

/**
 * A list's order from the URL's `sort` (`email.asc`), among `columns` (database column → how it
 * sorts); newest first when absent or not one of them. Choosing another order drops the page and
 * cursor (url-filters.ts): the list starts again at the top in the new order.
 */
export function useListSort(filters: ReturnType<typeof useUrlFilters>, columns: Record<string, SortColumn>) {
  const sort = parseSort(filters.get('sort'), Object.keys(columns)) ?? NEWEST_FIRST;
  const kind: SortKind = columns[sort.column] ?? { kind: 'time', nullable: false };
  const sorting: Sorting = {
    by: Object.fromEntries(
      Object.entries(columns).map(([column, c]) => [c.header, { column, first: c.first }]),
    ),
    current: sort,
    onSort: (next) =>
      filters.set(
        'sort',
        next.column === NEWEST_FIRST.column && next.descending === NEWEST_FIRST.descending
          ? ''
          : sortText(next),
      ),
  };
  return { sort, kind, sorting };
}

import { useRef } from 'react';
import { useSearchParams } from 'react-router';

/**
 * A list page's filters and page number, kept in the URL so that a reload, the back button or a
 * shared link shows the same list. Changing a filter goes back to the first page.
 */
export function useUrlFilters() {
  const [params, setParams] = useSearchParams();
  // Two changes before the URL catches up (typing in one filter, then at once in another) must
  // build on each other: the params of this render would bring the first change's old value back.
  // So changes build on the latest one asked for, until the URL itself changes.
  const latest = useRef({ from: params, next: params });
  if (latest.current.from !== params) latest.current = { from: params, next: params };
  return {
    get: (key: string) => params.get(key) ?? '',
    page: Math.max(0, Number(params.get('page')) || 0),
    set(key: string, value: string) {
      const next = new URLSearchParams(latest.current.next);
      if (value) next.set(key, value);
      else next.delete(key);
      if (key !== 'page') next.delete('page');
      latest.current.next = next;
      setParams(next, { replace: true });
    },
  };
}

/** The first and last row (inclusive, as `.range()` takes them) of a 0-based page. */
export const rowRange = (page: number, size: number): [number, number] => [
  page * size,
  page * size + size - 1,
];

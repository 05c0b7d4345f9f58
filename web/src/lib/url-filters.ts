import { useRef } from 'react';
import { useLocation, useSearchParams } from 'react-router';
import { isCursor } from './keyset';
import { FIRST_PAGE, type Position } from './keyset-list';

/**
 * A list page's filters and where it is in the list, kept in the URL so that a reload, the back
 * button or a shared link shows the same list: `page` (its number; alone for the lists paged by
 * number), `after` (the keyset cursor of the big lists) and `sort` (their order, `column.asc|desc`). The cursors of the pages before it, which Previous goes back through, are the history
 * entry's state: they survive a reload, not a shared link. Changing a filter goes back to the
 * first page.
 */
export function useUrlFilters() {
  const [params, setParams] = useSearchParams();
  const { state } = useLocation();
  // Two changes before the URL catches up (typing in one filter, then at once in another) must
  // build on each other: the params of this render would bring the first change's old value back.
  // So changes build on the latest one asked for, until the URL itself changes.
  const latest = useRef({ from: params, next: params });
  if (latest.current.from !== params) latest.current = { from: params, next: params };

  const after = params.get('after') ?? '';
  // A page number without a cursor that reads (an old link, an edited URL) is the first page.
  const position: Position = isCursor(after)
    ? {
        page: Math.max(1, Number(params.get('page')) || 0),
        after,
        back: Array.isArray(state?.back) ? (state.back as string[]) : [],
      }
    : FIRST_PAGE;

  const change = (edit: (next: URLSearchParams) => void, back: string[] = []) => {
    const next = new URLSearchParams(latest.current.next);
    edit(next);
    latest.current.next = next;
    setParams(next, { replace: true, state: { back } });
  };
  return {
    get: (key: string) => params.get(key) ?? '',
    /** The page of a list paged by number (0-based). */
    page: Math.max(0, Number(params.get('page')) || 0),
    /** The page of a keyset list. */
    position,
    set(key: string, value: string) {
      change((next) => {
        if (value) next.set(key, value);
        else next.delete(key);
        if (key !== 'page') {
          next.delete('page');
          next.delete('after');
        }
      });
    },
    go(to: Position) {
      change((next) => {
        if (to.after) {
          next.set('page', String(to.page));
          next.set('after', to.after);
        } else {
          next.delete('page');
          next.delete('after');
        }
      }, to.back);
    },
  };
}

import { useCallback, useSyncExternalStore } from 'react';

/**
 * Whether a CSS media query matches now, re-rendering when it starts or stops matching. For the
 * layouts that render different things (not only place them differently) by width: a pane that
 * is not shown is not rendered, so it fetches nothing.
 */
export function useMediaQuery(query: string): boolean {
  const subscribe = useCallback(
    (changed: () => void) => {
      const list = window.matchMedia(query);
      list.addEventListener('change', changed);
      return () => list.removeEventListener('change', changed);
    },
    [query],
  );
  return useSyncExternalStore(subscribe, () => window.matchMedia(query).matches);
}

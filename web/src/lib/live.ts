import { type QueryKey, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { supabase } from './supabase';

/** A `postgres_changes` binding: a table of `public`, perhaps a filter (`column=eq.value`). */
export type Live = { table: string; filter?: string };

let channels = 0;

/**
 * Keeps the queries under `queryKey` fresh from /realtime/v1 (docs/realtime.md) instead of
 * polling: any change of the bound tables the person may read marks them stale, and react-query
 * fetches those on screen again. When the channel is subscribed, what was read before it (or
 * while the socket was away) is marked stale too: changes written then were not pushed.
 */
export function useLive(bindings: Live[], queryKey: QueryKey) {
  const queries = useQueryClient();
  const key = JSON.stringify([bindings, queryKey]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` stands for both arguments
  useEffect(() => {
    const stale = () => queries.invalidateQueries({ queryKey });
    const channel = supabase.channel(`live-${++channels}`);
    for (const b of bindings)
      channel.on(
        'postgres_changes',
        { event: '*', schema: 'public', table: b.table, ...(b.filter ? { filter: b.filter } : {}) },
        stale,
      );
    // The first join: what this view read before it opened (the cache) is read again; a read
    // under way or done since began with the view, as new as the join give or take the instant
    // the join takes, so it is not sent twice. Every later join follows a lost connection: all again.
    const opened = Date.now();
    let joined = false;
    channel.subscribe((status) => {
      if (status !== 'SUBSCRIBED') return;
      if (joined) return void stale();
      joined = true;
      queries.invalidateQueries({
        queryKey,
        predicate: (q) => q.state.fetchStatus !== 'fetching' && q.state.dataUpdatedAt < opened,
      });
    });
    return () => {
      supabase.removeChannel(channel);
    };
  }, [key]);
}

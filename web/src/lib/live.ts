import { type QueryKey, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { supabase } from './supabase';

/** A `postgres_changes` binding: a table of `public`, perhaps a filter (`column=eq.value`). */
export type Live = { table: string; filter?: string };

let channels = 0;

/**
 * Keeps the queries under `queryKey` fresh from /realtime/v1 (docs/realtime.md) instead of
 * polling: any change of the bound tables the person may read marks them stale, and react-query
 * fetches those on screen again. Each time the channel is subscribed (first, and again after a
 * lost connection) they are marked stale too: what was written before the subscription, or while
 * the socket was away, was not pushed.
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
    channel.subscribe((status) => {
      if (status === 'SUBSCRIBED') stale();
    });
    return () => {
      supabase.removeChannel(channel);
    };
  }, [key]);
}

import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import type { TestService } from '../helpers/service.ts';

/** What a subscriber's callback got: supabase-js's payload of a postgres change. */
// biome-ignore lint/suspicious/noExplicitAny: tests read whatever the client passed on
export type Event = any;

/**
 * supabase-js as an app makes it with a token of its own (`accessToken`, which realtime-js asks
 * again at connect and on every heartbeat): the URL and anon key, then the person's or agent's
 * token. `useToken` swaps the token and hands it to open channels at once (`access_token`).
 */
export function clientFor(svc: { url: string; anonKey: string }, token: string) {
  let current = token;
  const client = createClient(svc.url, svc.anonKey, { accessToken: async () => current });
  return Object.assign(client, {
    async useToken(next: string) {
      current = next;
      await client.realtime.setAuth();
    },
  });
}

/**
 * A channel with one `postgres_changes` binding, subscribed: resolves once the server confirms
 * (SUBSCRIBED), rejects with the error it gave. `next()` waits for the next event; `statuses`
 * lists every status the channel reported (CLOSED when the server closed it).
 */
export async function subscribe(
  client: SupabaseClient,
  binding: { table: string; event?: '*' | 'INSERT' | 'UPDATE' | 'DELETE'; filter?: string },
  topic = `t-${Math.random().toString(36).slice(2)}`,
) {
  await client.realtime.setAuth(); // the token in the join itself, not just after it
  const events: Event[] = [];
  const statuses: string[] = [];
  const waiting: ((e: Event) => void)[] = [];
  const systems: Event[] = [];
  let onStatus: (() => void) | undefined;
  const channel = client.channel(topic);
  channel
    .on(
      'postgres_changes',
      {
        event: binding.event ?? '*',
        schema: 'public',
        table: binding.table,
        ...(binding.filter ? { filter: binding.filter } : {}),
      } as never,
      (e: Event) => {
        const w = waiting.shift();
        if (w) w(e);
        else events.push(e);
      },
    )
    .on('system', {}, (e: Event) => systems.push(e));
  await new Promise<void>((resolve, reject) =>
    channel.subscribe((status, err) => {
      statuses.push(status);
      onStatus?.();
      if (status === 'SUBSCRIBED') resolve();
      else if (status !== 'CLOSED') reject(err ?? new Error(status));
    }),
  );
  return {
    channel,
    statuses,
    systems,
    next: () =>
      new Promise<Event>((resolve) => (events.length ? resolve(events.shift()) : waiting.push(resolve))),
    /** Events received and not yet taken. */
    pending: () => events.length,
    /** Resolves once the channel reports `status`. */
    until: (status: string) =>
      new Promise<void>((resolve) => {
        const check = () => statuses.includes(status) && resolve();
        onStatus = check;
        check();
      }),
  };
}

/** Closes every channel and the socket of each client. */
export async function closeAll(clients: SupabaseClient[]) {
  for (const c of clients) await c.removeAllChannels();
}

export type Service = TestService;

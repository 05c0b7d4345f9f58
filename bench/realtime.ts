// /realtime/v1's cost (docs/performance.md, "Realtime"): the time from a write to the event at
// a supabase-js subscriber (p50/p99), beside the write alone (the difference is what follows the
// commit), and the time to fan one change out to 1,000 channels (one token for all, and 100
// tokens: one row read per token), beside a plain NOTIFY round trip on the same engine. Clients and service share this process (and its two cores).
// A benchmark, not a test: it never exits non-zero because of a figure.
import { performance } from 'node:perf_hooks';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import type { RunningService } from '../src/main.ts';
import { SERVICE } from '../src/platform/db/database.ts';
import { type BenchTenant, onBothEngines } from './bench-service.ts';

const WRITES = 200;
const FANOUT_WRITES = 20;

const pct = (t: number[], p: number) =>
  [...t].sort((a, b) => a - b)[Math.min(t.length - 1, Math.floor(t.length * p))] ?? 0;
const ms = (t: number[]) => `p50 ${pct(t, 0.5).toFixed(2)} ms, p99 ${pct(t, 0.99).toFixed(2)} ms`;

/** One write as the service path does it; resolves at its commit. */
const insert = (svc: RunningService, org: string, name: string) =>
  svc.services.db.asPrincipal(SERVICE, (tx) =>
    tx.query('insert into contacts (organization_id, first_name) values ($1, $2)', [org, name]),
  );

/** `channels` channels on one supabase-js client, each counting INSERTs of contacts into `onEvent`. */
async function subscriber(svc: RunningService, token: string, channels: number, onEvent: () => void) {
  const client = createClient(svc.url, svc.services.keys.anonKey, { accessToken: async () => token });
  await client.realtime.setAuth();
  await Promise.all(
    Array.from({ length: channels }, (_, i) => {
      const ch = client
        .channel(`bench-${i}`)
        .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'contacts' }, onEvent);
      return new Promise<void>((resolve, reject) =>
        ch.subscribe((s, err) =>
          s === 'SUBSCRIBED' ? resolve() : s !== 'CLOSED' && reject(err ?? new Error(s)),
        ),
      );
    }),
  );
  return client;
}

/** The write alone, until its commit is acknowledged (what realtime adds comes after it). */
async function writeOnly(svc: RunningService, tenant: BenchTenant) {
  const t: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const start = performance.now();
    await insert(svc, tenant.org, `o${i}`);
    t.push(performance.now() - start);
  }
  return t;
}

/**
 * Write → event at one subscriber, WRITES times. Timed from the statement's start: the notice
 * can be heard before the writer has read its own commit's acknowledgement.
 */
async function commitToEvent(svc: RunningService, tenant: BenchTenant) {
  let arrived: (() => void) | undefined;
  const client = await subscriber(svc, tenant.accessToken, 1, () => arrived?.());
  const t: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const got = new Promise<void>((resolve) => (arrived = resolve));
    const start = performance.now();
    await insert(svc, tenant.org, `w${i}`);
    await got;
    t.push(performance.now() - start);
  }
  await client.removeAllChannels();
  return t;
}

/** Write → the last of 1,000 events, on `sockets` sockets with one token each. */
async function fanOut(svc: RunningService, tenant: BenchTenant, sockets: number) {
  const { exp: _e, iat: _i, ...claims } = tenant.claims;
  let left = 0;
  let done: (() => void) | undefined;
  const onEvent = () => {
    if (--left === 0) done?.();
  };
  const clients: SupabaseClient[] = [];
  for (let s = 0; s < sockets; s++) {
    const token =
      sockets === 1
        ? tenant.accessToken
        : await svc.services.tokens.sign({ ...claims, session_id: `b${s}` }, 3600);
    clients.push(await subscriber(svc, token, 1000 / sockets, onEvent));
  }
  const t: number[] = [];
  for (let i = 0; i < FANOUT_WRITES; i++) {
    left = 1000;
    const all = new Promise<void>((resolve) => (done = resolve));
    const start = performance.now();
    await insert(svc, tenant.org, `f${i}`);
    await all;
    t.push(performance.now() - start);
  }
  await Promise.all(clients.map((c) => c.removeAllChannels()));
  return t;
}

/** The baseline: a NOTIFY statement → heard by a LISTEN of the same database. */
async function notifyRoundTrip(svc: RunningService) {
  let heard: (() => void) | undefined;
  const stop = await svc.services.db.listen('bench_rt', () => heard?.());
  const t: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const got = new Promise<void>((resolve) => (heard = resolve));
    const start = performance.now();
    await svc.services.db.query(`select pg_notify('bench_rt', $1)`, [String(i)]);
    await got;
    t.push(performance.now() - start);
  }
  await stop();
  return t;
}

await onBothEngines(
  'realtime',
  async (engine, svc, tenant) => {
    const base = await notifyRoundTrip(svc);
    // What the trigger's NOTIFY costs a writer: the same inserts with it off, then on.
    await svc.services.db.query('alter table contacts disable trigger realtime_notice');
    const silent = await writeOnly(svc, tenant);
    await svc.services.db.query('alter table contacts enable trigger realtime_notice');
    const write = await writeOnly(svc, tenant);
    const one = await commitToEvent(svc, tenant);
    const shared = await fanOut(svc, tenant, 10);
    const tokens = await fanOut(svc, tenant, 100);
    const after = (t: number[]) => `${(pct(t, 0.5) - pct(write, 0.5)).toFixed(2)} ms after the commit at p50`;
    return [
      `${engine}: NOTIFY statement → heard           ${ms(base)}`,
      `${engine}: insert without the trigger         ${ms(silent)}`,
      `${engine}: insert, until committed            ${ms(write)} (${(pct(write, 0.5) / pct(silent, 0.5)).toFixed(2)}× without)`,
      `${engine}: insert → event, 1 subscriber       ${ms(one)} (${after(one)})`,
      `${engine}: insert → 1,000th event, 1 token    ${ms(shared)} (${after(shared)}; 10 sockets × 100 channels)`,
      `${engine}: insert → 1,000th event, 100 tokens ${ms(tokens)} (${after(tokens)}; 100 sockets × 10 channels)`,
    ];
  },
  { REALTIME_CHANNELS_PER_ORGANIZATION: '5000', REALTIME_SOCKETS_PER_ADDRESS: '5000' },
);
process.exit(0);

// Meta's webhook receiver under load (issues 13, 28): signed WhatsApp deliveries acknowledged per
// second, beside a bare server's that verifies the same signature and commits the raw body
// (bench/webhooks-baseline.ts) in the same run, and the time from a
// delivery to its message being visible at /rest/v1/messages with the inline worker.
//
// Three processes: the service (bench/webhooks-service.ts, the real startService with the worker
// inline), a bare node:http server that verifies and commits the raw body (bench/webhooks-baseline.ts), and
// wrk posting pre-signed deliveries, each with its own message id (bench/deliveries.lua, fed by
// bench/webhook-deliveries.ts). Rounds interleave the two servers (service, bare, service, …),
// each a warm-up and a measured run; medians are printed. The service commits each delivery to its
// webhook inbox and answers; the inline worker routes the inbox and processes the events while
// deliveries come in, as in a deployment; after each service round the bench waits until the inbox
// is empty and every event processed (and reports how fast, counted by GET
// /functions/v1/webhook-events: the end-to-end rate against the receipt rate), so
// the next run of either server starts on an idle machine. Latency comes first, on the fresh service: LATENCY_N deliveries, one every
// LATENCY_GAP_MS, each timed from its POST to the first poll of GET /rest/v1/messages (as the
// owner) that lists it. PostgreSQL runs on a scratch database (bench/scratch-database.ts), PGlite
// in a throwaway data directory. A benchmark, not a test: it never fails on a figure.
//
// The drain (PostgreSQL only: workers are processes of their own, and PGlite is one process's):
// processing measured apart from receipt. Each round stores a load of deliveries with no worker
// running (the service with WORKER=off; its rate is the receipt rate the drain is compared with),
// then starts 1 worker process (bench/webhooks-worker.ts, as `svc worker` runs) and times it from
// `go` until no event is pending; then the same with 2 worker processes. CPU per event of the
// workers and of PostgreSQL's backends comes from /proc (bench/cpu.ts).
//
// BENCH_SECONDS (default 3) per measured run, BENCH_ROUNDS (3), BENCH_CONNECTIONS (32),
// BENCH_ENGINES (pglite,postgres), BENCH_PARTS (receipt,drain), BENCH_LATENCY_N (40);
// WORKER_POLL_MS (the service's, default 2000) and WORKER_CONCURRENCY pass through to the service
// and the drain's workers, and WORKER=off measures receipt alone (nothing is processed: no
// latency, no processing rate).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { type Child, median, startChild } from './child.ts';
import { type CpuUse, cpuMeter } from './cpu.ts';
import { withScratchDatabase } from './scratch-database.ts';
import { delivery, writeDeliveries } from './webhook-deliveries.ts';
import type { ServiceInfo } from './webhooks-service.ts';
import { CONNECTIONS, type Load, requireWrk, wrkScript } from './wrk.ts';

const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 3);
const WARMUP = 1;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const ENGINES = (env.BENCH_ENGINES ?? 'pglite,postgres').split(',');
const PARTS = (env.BENCH_PARTS ?? 'receipt,drain').split(',');
const LATENCY_N = Number(env.BENCH_LATENCY_N ?? 40);
const LATENCY_GAP_MS = 100;
/** Deliveries written per second of a run: above any rate seen here, so none repeats. */
const PER_SECOND = 12000;
const LUA = path.join(path.dirname(fileURLToPath(import.meta.url)), 'deliveries.lua');
const RECEIVER = '/functions/v1/whatsapp-webhook';
const INLINE = env.WORKER !== 'off';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? Number.NaN;

function owner(svc: ServiceInfo) {
  return { apikey: svc.anonKey, authorization: `Bearer ${svc.accessToken}` };
}

/** The owner's webhook events (`pending` ones only), as GET /functions/v1/webhook-events counts them. */
async function events(svc: ServiceInfo, status?: 'pending'): Promise<number> {
  const res = await fetch(
    `${svc.url}/functions/v1/webhook-events?per_page=1${status ? `&status=${status}` : ''}`,
    { headers: owner(svc) },
  );
  if (res.status !== 200) throw new Error(`webhook-events: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { pagination: { total: number } }).pagination.total;
}

type Processed = { events: number; backlog: number; perSecond: number };

/**
 * One service round: its load, then a wait until the inline worker has processed every event it
 * stored. `perSecond` is the round's events over the time from its start to the last processed;
 * `backlog` what was still pending when the load stopped.
 */
async function serviceRound(
  service: Child<ServiceInfo>,
  dir: string,
  tag: string,
  cpu: Meter,
): Promise<[Run, Processed]> {
  const svc = service.info;
  const inbox = async () => (await service.ask<{ inbox: number }>('inbox')).inbox;
  const before = await events(svc);
  const started = performance.now();
  const run = await load(svc.url, dir, tag, cpu);
  // Acknowledged and not yet processed: still in the inbox, or routed and pending.
  const backlog = (await inbox()) + (await events(svc, 'pending'));
  if (!INLINE) return [run, { events: await inbox(), backlog, perSecond: 0 }];
  while ((await inbox()) > 0 || (await events(svc, 'pending')) > 0) await sleep(50);
  const seconds = (performance.now() - started) / 1000;
  const stored = (await events(svc)) - before;
  return [run, { events: stored, backlog, perSecond: stored / seconds }];
}

/** Milliseconds from each POST to the first poll of /rest/v1/messages that lists its message. */
async function latencies(svc: ServiceInfo): Promise<number[]> {
  const postedAt = new Map<string, number>();
  const seenAt = new Map<string, number>();
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const res = await fetch(
        `${svc.url}/rest/v1/messages?select=provider_message_id&direction=eq.in&order=created_at.desc&limit=100`,
        { headers: owner(svc) },
      );
      const now = performance.now();
      for (const m of (await res.json()) as { provider_message_id: string }[])
        if (!seenAt.has(m.provider_message_id)) seenAt.set(m.provider_message_id, now);
      await sleep(10);
    }
  })();
  const posts: Promise<void>[] = [];
  for (let n = 0; n < LATENCY_N; n++) {
    const d = delivery('latency', n);
    postedAt.set(d.wamid, performance.now());
    posts.push(
      fetch(`${svc.url}${RECEIVER}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': d.signature },
        body: d.body,
      }).then(async (res) => {
        if (res.status !== 200) throw new Error(`delivery: ${res.status} ${await res.text()}`);
      }),
    );
    await sleep(LATENCY_GAP_MS);
  }
  await Promise.all(posts);
  const deadline = performance.now() + 60_000;
  while (seenAt.size < LATENCY_N && performance.now() < deadline) await sleep(50);
  polling = false;
  await poller;
  return [...postedAt].map(([wamid, at]) => (seenAt.get(wamid) ?? Number.NaN) - at);
}

type Run = Load & CpuUse & { duplicates: boolean };
/** The CPU a server process and PostgreSQL's backends of the bench's database use (bench/cpu.ts). */
type Meter = () => (requests: number) => CpuUse;

/** One warm-up and one measured wrk run of fresh deliveries against `url`, with its CPU per request. */
async function load(url: string, dir: string, tag: string, cpu: Meter): Promise<Run> {
  const file = (name: string, seconds: number) =>
    writeDeliveries(path.join(dir, `${name}.tsv`), name, seconds * PER_SECOND);
  await wrkScript(`${url}${RECEIVER}`, LUA, WARMUP, [file(`${tag}-warm`, WARMUP)]);
  const meter = cpu();
  const measured = await wrkScript(`${url}${RECEIVER}`, LUA, SECONDS, [file(tag, SECONDS)]);
  return {
    ...measured,
    ...meter(measured.rps * SECONDS),
    duplicates: measured.rps * SECONDS > SECONDS * PER_SECOND,
  };
}

async function benchEngine(engine: string, dbEnv: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-webhooks-'));
  let service: Child<ServiceInfo> | null = null;
  let baseline: Child<{ url: string }> | null = null;
  try {
    service = await startChild<ServiceInfo>('webhooks-service.ts', { ...dbEnv, BENCH_DATA_DIR: dir });
    baseline = await startChild<{ url: string }>('webhooks-baseline.ts', { ...dbEnv, BENCH_DATA_DIR: dir });
    const lat = INLINE ? await latencies(service.info) : [];
    const database = dbEnv.DATABASE_URL ? new URL(dbEnv.DATABASE_URL).pathname.slice(1) : undefined;
    const [svcPid, barePid] = [service.pid, baseline.pid];
    const runs = { service: [] as Run[], baseline: [] as Run[] };
    const processed: Processed[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const [run, p] = await serviceRound(service, dir, `${engine}-${process.pid}-r${round}`, () =>
        cpuMeter(svcPid, database),
      );
      runs.service.push(run);
      processed.push(p);
      runs.baseline.push(
        await load(baseline.info.url, dir, `bare-${process.pid}-r${round}`, () =>
          cpuMeter(barePid, database),
        ),
      );
      console.log(
        `${engine} round ${round}: service ${run.rps.toFixed(0)}/s, bare ${runs.baseline.at(-1)?.rps.toFixed(0)}/s, ` +
          (INLINE
            ? `${p.events} events processed at ${p.perSecond.toFixed(0)}/s (${p.backlog} pending when the load stopped)`
            : `${p.events} deliveries in the inbox, none routed (WORKER=off)`),
      );
    }
    return report(engine, runs, processed, lat);
  } finally {
    await service?.stop();
    await baseline?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(
  engine: string,
  runs: { service: Run[]; baseline: Run[] },
  processed: Processed[],
  lat: number[],
): string[] {
  const med = (rs: Run[]) => ({
    rps: median(rs.map((r) => r.rps)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    errors: rs.reduce((n, r) => n + r.errors, 0),
    server: median(rs.map((r) => r.server)) / 1000,
    postgres: median(rs.map((r) => r.postgres)) / 1000,
  });
  const [svc, base] = [med(runs.service), med(runs.baseline)];
  const line = (label: string, l: ReturnType<typeof med>, rs: Run[]) =>
    `  ${label} ${l.rps.toFixed(0).padStart(6)} req/s  p50 ${l.p50.toFixed(2).padStart(6)} ms  ` +
    `p99 ${l.p99.toFixed(2).padStart(7)} ms   rounds: ${rs.map((r) => r.rps.toFixed(0)).join(' / ')}` +
    (l.errors ? `  (${l.errors} errors)` : '') +
    `\n    CPU a delivery: ${l.server.toFixed(2)} ms server + ${l.postgres.toFixed(2)} ms PostgreSQL`;
  const seen = lat.filter((x) => !Number.isNaN(x));
  const poll = env.WORKER_POLL_MS ?? '2000';
  return [
    `${engine} (load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(
        ' ',
      )}): signed WhatsApp deliveries, wrk -t1 -c${CONNECTIONS}, ${ROUNDS} rounds of ${SECONDS} s, medians`,
    line('service (verify, commit to the inbox)', svc, runs.service),
    line('bare (verify, commit the raw body)   ', base, runs.baseline),
    `  service / bare: ${(svc.rps / base.rps).toFixed(2)}× the req/s (median of the rounds' own ratios ` +
      `${median(runs.service.map((r, i) => r.rps / (runs.baseline[i] as Run).rps)).toFixed(2)}×), ` +
      `p99 ${(svc.p99 / base.p99).toFixed(1)}×` +
      (runs.service.some((r) => r.duplicates) ? '  (some deliveries repeated: raise PER_SECOND)' : ''),
    INLINE
      ? `  inline worker: ${median(processed.map((p) => p.perSecond)).toFixed(0)} events processed/s ` +
        `(${(median(processed.map((p) => p.perSecond)) / svc.rps).toFixed(2)}× the receipt rate), from a round's start ` +
        `to its last event (rounds: ${processed.map((p) => `${p.events} at ${p.perSecond.toFixed(0)}/s, ${p.backlog} left at the end of the load`).join('; ')})`
      : '  WORKER=off: receipt alone, nothing processed',
    ...(INLINE
      ? [
          `  POST → visible at /rest/v1/messages, ${seen.length} of ${lat.length} deliveries, WORKER_POLL_MS ${poll}: ` +
            `p50 ${percentile(seen, 50).toFixed(0)} ms, p95 ${percentile(seen, 95).toFixed(0)} ms, max ${Math.max(...seen).toFixed(0)} ms`,
        ]
      : []),
  ];
}

type Drain = {
  receipt: number;
  events: number;
  perSecond: number;
  cpu: { server: number; postgres: number };
  /** Events of the database so far that took more than one run (a retry waits out its backoff). */
  retried: number;
};

/**
 * One drain: a receipt load with no worker running (the events stay pending), then `workers`
 * worker processes, timed from `go` until none is pending.
 */
async function drainRound(
  svc: ServiceInfo,
  dbEnv: Record<string, string>,
  client: pg.Client,
  dir: string,
  tag: string,
  workers: number,
): Promise<Drain> {
  // Acknowledged and not processed: in the inbox (one event each here), or routed and pending.
  const pending = async () =>
    (
      await client.query<{ n: number }>(
        `select ((select count(*) from app.webhook_events where status = 'pending')
                + (select count(*) from app.webhook_inbox))::int as n`,
      )
    ).rows[0]?.n ?? 0;
  // Whether any is left: what the drain's end is watched with. Counting every time (~10 ms of a
  // backend every 50 ms) took PostgreSQL's CPU from the drain it measures, and counted in it.
  const anyPending = async () =>
    (
      await client.query<{ any: boolean }>(
        `select exists (select from app.webhook_events where status = 'pending')
             or exists (select from app.webhook_inbox) as any`,
      )
    ).rows[0]?.any === true;
  // The receipt here only fills the backlog: its CPU is not what this round measures.
  const run = await load(svc.url, dir, tag, () => () => ({ server: 0, postgres: 0, syscalls: 0 }));
  const events = await pending();
  const children = await Promise.all(
    Array.from({ length: workers }, () =>
      startChild<{ pid: number }>('webhooks-worker.ts', { ...dbEnv, BENCH_DATA_DIR: dir }),
    ),
  );
  try {
    const database = new URL(dbEnv.DATABASE_URL as string).pathname.slice(1);
    const meters = children.map((c, i) => cpuMeter(c.pid, i === 0 ? database : undefined));
    const started = performance.now();
    for (const c of children) c.send('go');
    while (await anyPending()) await sleep(100);
    const seconds = (performance.now() - started) / 1000;
    const cpu = meters
      .map((m) => m(events))
      .reduce((a, b) => ({
        server: a.server + b.server,
        postgres: a.postgres + b.postgres,
        syscalls: a.syscalls + b.syscalls,
      }));
    const [retried] = (
      await client.query<{ n: number }>(
        'select count(*)::int as n from app.webhook_events where attempts > 1',
      )
    ).rows;
    return { receipt: run.rps, events, perSecond: events / seconds, cpu, retried: retried?.n ?? 0 };
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}

/** Receipt alone, then processing alone with 1 and 2 worker processes (see the top). */
async function benchDrain(dbEnv: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-webhooks-'));
  let service: Child<ServiceInfo> | null = null;
  const client = new pg.Client({ connectionString: dbEnv.DATABASE_URL });
  try {
    service = await startChild<ServiceInfo>('webhooks-service.ts', {
      ...dbEnv,
      BENCH_DATA_DIR: dir,
      WORKER: 'off',
    });
    await client.connect();
    const one: Drain[] = [];
    const two: Drain[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const tag = `drain-${process.pid}-r${round}`;
      one.push(await drainRound(service.info, dbEnv, client, dir, `${tag}-w1`, 1));
      two.push(await drainRound(service.info, dbEnv, client, dir, `${tag}-w2`, 2));
      const show = (d: Drain | undefined) =>
        d
          ? `${d.events} events at ${d.perSecond.toFixed(0)}/s (receipt ${d.receipt.toFixed(0)}/s` +
            `${d.retried ? `, ${d.retried} events retried so far` : ''})`
          : '';
      console.log(
        `postgres drain round ${round}: 1 worker ${show(one.at(-1))}; 2 workers ${show(two.at(-1))}`,
      );
    }
    const receipt = median([...one, ...two].map((d) => d.receipt));
    const line = (label: string, ds: Drain[]) => {
      const rate = median(ds.map((d) => d.perSecond));
      const ms = (us: number) => (us / 1000).toFixed(2);
      return (
        `  ${label} ${rate.toFixed(0).padStart(6)} events/s, ${(rate / receipt).toFixed(2)}× the receipt rate; ` +
        `CPU an event ${ms(median(ds.map((d) => d.cpu.server)))} ms worker + ${ms(median(ds.map((d) => d.cpu.postgres)))} ms PostgreSQL ` +
        `(rounds: ${ds.map((d) => `${d.events} at ${d.perSecond.toFixed(0)}/s`).join(' / ')})`
      );
    };
    const rate = (ds: Drain[]) => median(ds.map((d) => d.perSecond));
    return [
      `postgres drain (load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(
          ' ',
        )}): events stored with no worker, then drained by worker processes, ${ROUNDS} rounds, medians`,
      `  receipt, WORKER=off        ${receipt.toFixed(0).padStart(6)} deliveries/s (rounds: ${[...one, ...two].map((d) => d.receipt.toFixed(0)).join(' / ')})`,
      line('drain, 1 worker process ', one),
      line('drain, 2 worker processes', two),
      `  2 workers / 1 worker: ${(rate(two) / rate(one)).toFixed(2)}× (median of the rounds' own ratios ` +
        `${median(two.map((d, i) => d.perSecond / (one[i] as Drain).perSecond)).toFixed(2)}×)`,
    ];
  } finally {
    await client.end().catch(() => {});
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (requireWrk()) {
  const started = performance.now();
  const out: string[] = [];
  for (const engine of ENGINES) {
    if (engine === 'pglite' && PARTS.includes('receipt')) out.push(...(await benchEngine('pglite', {})));
    if (engine === 'postgres' && PARTS.includes('receipt')) {
      const lines = await withScratchDatabase('webhooks', (url) =>
        benchEngine('postgres', { DATABASE_URL: url }),
      );
      out.push(...(lines ?? []));
    }
    if (engine === 'postgres' && PARTS.includes('drain')) {
      const lines = await withScratchDatabase('webhooks_drain', (url) => benchDrain({ DATABASE_URL: url }));
      out.push(...(lines ?? []));
    }
  }
  console.log();
  for (const line of out) console.log(line);
  console.log(`(${((performance.now() - started) / 1000).toFixed(0)} s in all)`);
}

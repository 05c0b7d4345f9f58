// Sends, two ways, on a scratch PostgreSQL database against the fake Graph API (in this process).
//
// 1. Over HTTP, against what the same work costs: wrk (its own process, CONNECTIONS keep-alive
//    connections) posts WhatsApp template sends to /functions/v1/whatsapp-send-message on the
//    service (bench/messages-service.ts, the real startService, worker inline) and, in turn, to a
//    bare node:http + pg server doing the same durable work (bench/messages-baseline.ts: verify the
//    JWT, insert the message and its job in one transaction, call the fake, record the answer).
//    Rounds alternate the two (1 s warm-up, SECONDS measured), medians and the ratio are printed
//    with the CPU each send cost the server process and PostgreSQL (/proc, bench/cpu.ts).
// 2. Through the queue: each round queues MESSAGES sends as a crashed API process leaves them
//    (queueMessage: row and job committed, no call), waits until they are due, starts the workers
//    (`startJobs`, each with its own pool, WORKER_CONCURRENCY 4) and times them until every message
//    is `sent`; so a figure includes the workers' start and up to one poll (WORKER_POLL_MS 500).
//    Beside it, CONCURRENCY loops of fetches straight to the fake for RAW_MS.
// Rounds interleave so drift on a shared machine hits each alike; medians are printed. A
// benchmark, not a test: it prints figures and never fails on a time. docs/performance.md has runs.
// BENCH_SECONDS (4), BENCH_ROUNDS (3), BENCH_CONNECTIONS (32), BENCH_PARTS (http,queue).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startFakeGraph } from '../src/dev/fake-graph/server.ts';
import { queueMessage } from '../src/domain/send-message.ts';
import { startJobs } from '../src/jobs/index.ts';
import { startService } from '../src/main.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { connectAccount, signUpOwner } from './bench-service.ts';
import { median, startChild } from './child.ts';
import { cpuMeter } from './cpu.ts';
import { GRAPH_TOKEN, PHONE_ID, RECIPIENT, type SendsInfo } from './messages-fixture.ts';
import { withScratchDatabase } from './scratch-database.ts';
import { CONNECTIONS, type Load, requireWrk, wrk } from './wrk.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const PARTS = (process.env.BENCH_PARTS ?? 'http,queue').split(',');
const MESSAGES = 300;
const RAW_MS = 2000;
const CONCURRENCY = 4;
const TOKEN = GRAPH_TOKEN;

const graph = await startFakeGraph({ accounts: { [PHONE_ID]: { token: TOKEN, channel: 'whatsapp' } } });
const env = {
  META_GRAPH_URL: graph.url,
  META_INSTAGRAM_GRAPH_URL: graph.url,
  // Queued sends start after the first-retry delay, which must outlast the Graph deadline.
  META_GRAPH_TIMEOUT_MS: '900',
  SEND_FIRST_RETRY_SECONDS: '1',
  WORKER_POLL_MS: '500',
  WORKER_CONCURRENCY: String(CONCURRENCY),
};

/** Direct calls to the fake: what it can answer, with nothing of ours in between. */
async function rawRate(): Promise<number> {
  const body = JSON.stringify({
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: '16505551234',
    type: 'template',
    template: { name: 'welcome', language: { code: 'en' } },
  });
  const end = performance.now() + RAW_MS;
  let n = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const res = await fetch(`${graph.url}/v26.0/${PHONE_ID}/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body,
        });
        await res.text();
        n++;
      }
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

async function throughTheQueue(url: string): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-'));
  const config = loadConfig({
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATA_DIR: dir,
    DATABASE_URL: url,
    WORKER: 'off',
    RATE_LIMIT_STANDARD_PER_MINUTE: '1000000',
    ...env,
  });
  const svc = await startService(config);
  const s = svc.services;
  try {
    const { accessToken, claims, org } = await signUpOwner(svc, 'Bench');
    await s.db.query("update organizations set plan = 'scale' where id = $1", [org]);
    await s.db.query("update plans set outbound_messages = null where slug = 'scale'");
    await connectAccount(svc, accessToken, {
      provider: 'whatsapp',
      external_id: PHONE_ID,
      access_token: TOKEN,
    });
    const principal = { kind: 'user' as const, userId: claims.sub as string, claims };

    const throughQueue = async (workers: number): Promise<number> => {
      const ids: string[] = [];
      for (let i = 0; i < MESSAGES; i++) {
        const q = await queueMessage(s, principal, {
          channel: 'whatsapp',
          to: RECIPIENT,
          template: { name: 'welcome', language: 'en' },
        });
        ids.push(q.message.id);
      }
      await new Promise((r) => setTimeout(r, 1100)); // every job due
      const started = performance.now();
      const running = [];
      for (let w = 0; w < workers; w++) {
        const db = openPostgres(url, 5);
        const queue = await startJobs(
          { config, db, log: pino({ level: 'silent' }), now: () => new Date(), secrets: s.secrets },
          { work: true },
        );
        running.push({ db, queue });
      }
      for (;;) {
        const [r] = await s.db.query<{ n: number }>(
          "select count(*)::int as n from messages where id = any($1::uuid[]) and status = 'sent'",
          [ids],
        );
        if (r?.n === MESSAGES) break;
        await new Promise((res) => setTimeout(res, 20));
      }
      const rate = MESSAGES / ((performance.now() - started) / 1000);
      for (const { db, queue } of running) {
        await queue.stop();
        await db.close();
      }
      return rate;
    };

    const raw: number[] = [];
    const one: number[] = [];
    const two: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      raw.push(await rawRate());
      one.push(await throughQueue(1));
      two.push(await throughQueue(2));
      process.stdout.write(
        `round ${round}: raw ${raw.at(-1)?.toFixed(0)}/s, 1 worker ${one.at(-1)?.toFixed(0)}/s, 2 workers ${two.at(-1)?.toFixed(0)}/s\n`,
      );
    }
    const sent = graph.sent().length;
    return [
      `PostgreSQL, ${MESSAGES} messages a round, ${ROUNDS} rounds, WORKER_CONCURRENCY ${CONCURRENCY}; medians:`,
      `  fake Graph API, ${CONCURRENCY} direct callers  ${median(raw).toFixed(0).padStart(6)} calls/s`,
      `  through the queue, 1 worker    ${median(one).toFixed(0).padStart(6)} sends/s`,
      `  through the queue, 2 workers   ${median(two).toFixed(0).padStart(6)} sends/s`,
      `  (the fake answered ${sent} sends in all)`,
    ];
  } finally {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Sends over HTTP: the service and the bare baseline in turn, wrk in its own process. */
async function overHttp(url: string): Promise<string[]> {
  const dbEnv = { DATABASE_URL: url, META_GRAPH_URL: graph.url };
  const service = await startChild<SendsInfo>('messages-service.ts', dbEnv);
  const baseline = await startChild<{ url: string }>('messages-baseline.ts', {
    ...dbEnv,
    BENCH_SENDS_INFO: JSON.stringify(service.info),
  });
  const database = new URL(url).pathname.slice(1);
  const info = service.info;
  const body = JSON.stringify({ to: RECIPIENT, template: { name: 'welcome', language: 'en' } });
  const headers = {
    apikey: info.anonKey,
    authorization: `Bearer ${info.accessToken}`,
    'content-type': 'application/json',
  };
  type Measured = Load & { server: number; postgres: number };
  const run = async (target: string, pid: number): Promise<Measured> => {
    await wrk(target, { method: 'POST', body, headers }, 1);
    const meter = cpuMeter(pid, database);
    const load = await wrk(target, { method: 'POST', body, headers }, SECONDS);
    return { ...load, ...meter(load.rps * SECONDS) };
  };
  const svc: Measured[] = [];
  const bare: Measured[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      svc.push(await run(`${info.url}/functions/v1/whatsapp-send-message`, service.pid));
      bare.push(await run(baseline.info.url, baseline.pid));
      const [a, b] = [svc.at(-1) as Measured, bare.at(-1) as Measured];
      process.stdout.write(
        `http round ${round}: service ${a.rps.toFixed(0)}/s (${a.errors} errors), bare ${b.rps.toFixed(0)}/s (${b.errors} errors), ratio ${(a.rps / b.rps).toFixed(2)}\n`,
      );
    }
  } finally {
    await service.stop();
    await baseline.stop();
  }
  const line = (label: string, ms: Measured[]) =>
    `  ${label} ${median(ms.map((m) => m.rps))
      .toFixed(0)
      .padStart(5)} sends/s  p50 ${median(ms.map((m) => m.p50))
      .toFixed(1)
      .padStart(6)} ms  p99 ${median(ms.map((m) => m.p99))
      .toFixed(1)
      .padStart(7)} ms  ` +
    `CPU a send: server ${(median(ms.map((m) => m.server)) / 1000).toFixed(2)} ms, PostgreSQL ${(median(ms.map((m) => m.postgres)) / 1000).toFixed(2)} ms   rounds: ${ms.map((m) => m.rps.toFixed(0)).join(' / ')}` +
    (ms.some((m) => m.errors) ? `  (${ms.reduce((n, m) => n + m.errors, 0)} errors)` : '');
  return [
    `PostgreSQL, POST whatsapp-send-message (a template to one recipient), wrk -t1 -c${CONNECTIONS}, ${ROUNDS} rounds of ${SECONDS} s; medians:`,
    line('service                      ', svc),
    line('bare node:http + pg (baseline)', bare),
    `  service / baseline: ${(median(svc.map((m) => m.rps)) / median(bare.map((m) => m.rps))).toFixed(2)}× (median of the rounds' own ratios ${median(svc.map((m, i) => m.rps / (bare[i] as Measured).rps)).toFixed(2)}×)`,
  ];
}

if (requireWrk() || !PARTS.includes('http')) {
  // A database each: the number is connected in one organization of a database at a time.
  const lines = [
    ...((PARTS.includes('http') ? await withScratchDatabase('sends_http', overHttp) : []) ?? []),
    ...((PARTS.includes('queue') ? await withScratchDatabase('sends_queue', throughTheQueue) : []) ?? []),
  ];
  process.stdout.write(
    `\n(load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')})\n`,
  );
  for (const l of lines) process.stdout.write(`${l}\n`);
}
await graph.close();

// Sends per second through the queue against the fake Graph API, with one worker and with two, on
// a scratch PostgreSQL database, beside the fake's own rate for direct calls in the same run. Each
// round queues MESSAGES sends as a crashed API process leaves them (queueMessage: row and job
// committed, no call), waits until they are due, starts the workers (`startJobs`, each with its
// own pool, WORKER_CONCURRENCY 4) and times them until every message is `sent`; so a figure
// includes the workers' start and up to one poll (WORKER_POLL_MS 500). The raw rate is CONCURRENCY
// loops of fetches straight to the fake for RAW_MS. Rounds interleave the three so drift on a
// shared machine hits each alike; medians are printed. A benchmark, not a test: it prints figures
// and never fails on a time. docs/performance.md has a run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { loadConfig } from '../src/config.ts';
import { startFakeGraph } from '../src/dev/fake-graph/server.ts';
import { queueMessage } from '../src/domain/send-message.ts';
import { startJobs } from '../src/jobs/index.ts';
import { startService } from '../src/main.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { signUpOwner } from './bench-service.ts';
import { withScratchDatabase } from './scratch-database.ts';

const ROUNDS = 3;
const MESSAGES = 300;
const RAW_MS = 2000;
const CONCURRENCY = 4;
const PHONE_ID = '106540352242922';
const TOKEN = 'EAAG-bench-token';

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

const graph = await startFakeGraph({ accounts: { [PHONE_ID]: { token: TOKEN, channel: 'whatsapp' } } });
const env = {
  META_GRAPH_URL: graph.url,
  META_INSTAGRAM_GRAPH_URL: graph.url,
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

const lines = await withScratchDatabase('messages', async (url) => {
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
    const connect = await fetch(`${svc.url}/functions/v1/connected-accounts`, {
      method: 'POST',
      headers: {
        apikey: s.keys.anonKey,
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ provider: 'whatsapp', external_id: PHONE_ID, access_token: TOKEN }),
    });
    if (connect.status !== 201) throw new Error(`connect: ${connect.status} ${await connect.text()}`);
    const principal = { kind: 'user' as const, userId: claims.sub as string, claims };

    const throughQueue = async (workers: number): Promise<number> => {
      const ids: string[] = [];
      for (let i = 0; i < MESSAGES; i++) {
        const q = await queueMessage(s, principal, {
          channel: 'whatsapp',
          to: '+16505551234',
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
});
for (const l of lines ?? []) process.stdout.write(`${l}\n`);
await graph.close();

// What an idle job worker costs requests on PGlite, where it shares the one connection: a small
// transaction (two statements, as a request's begin/claims/read/commit) measured back to back for
// a while with no queue, then with the queue started and a worker polling one empty job name, at
// the production settings (WORKER_POLL_MS 2000, supervise 60 s) and at the tests' (500 ms, 1 s).
// Slices alternate so drift on a shared machine hits every variant alike. A benchmark, not a
// test: it prints figures and never exits non-zero because of one. docs/jobs.md has a run.
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { openPglite } from '../src/platform/db/pglite.ts';
import { openQueue } from '../src/platform/queue/pg-boss.ts';
import type { Queue } from '../src/platform/queue/queue.ts';

const SLICE_MS = 5_000;
const ROUNDS = 3;
const log = pino({ level: 'silent' });
const db = await openPglite(undefined);

async function slice(samples: number[]) {
  const end = Date.now() + SLICE_MS;
  while (Date.now() < end) {
    const start = performance.now();
    await db.transaction(async (tx) => {
      await tx.query('select 1');
      await tx.query('select 2');
    });
    samples.push(performance.now() - start);
    // A request arrives now and then, not in a tight loop that never lets a timer fire.
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function withWorker(pollIntervalMs: number, superviseIntervalSeconds: number) {
  const queue = await openQueue(db, { log, pollIntervalMs, supervise: true, superviseIntervalSeconds });
  await queue.register([
    {
      name: 'bench-idle',
      policy: { attempts: 1, backoffSeconds: 1, maxBackoffSeconds: 1, maxAgeSeconds: 60, leaseSeconds: 60 },
      run: async () => ({ status: 'done' }),
    },
  ]);
  await queue.work();
  return queue;
}

const variants: { label: string; start(): Promise<Queue | null>; samples: number[] }[] = [
  { label: 'no queue', start: async () => null, samples: [] },
  { label: 'idle worker, poll 2 s, supervise 60 s', start: () => withWorker(2000, 60), samples: [] },
  { label: 'idle worker, poll 0.5 s, supervise 1 s', start: () => withWorker(500, 1), samples: [] },
];
for (let round = 0; round < ROUNDS; round++) {
  for (const v of variants) {
    const queue = await v.start();
    await slice(v.samples);
    await queue?.stop();
  }
}
const q = (s: number[], p: number) =>
  (s[Math.min(s.length - 1, Math.floor(s.length * p))] as number).toFixed(2);
const base = variants[0]?.samples.length ?? 1;
for (const v of variants) {
  const s = v.samples.sort((a, b) => a - b);
  process.stdout.write(
    `${v.label.padEnd(42)} tx/s ${(s.length / ((SLICE_MS * ROUNDS) / 1000)).toFixed(0).padStart(5)} (${((s.length / base) * 100).toFixed(0)} %)  p50 ${q(s, 0.5)} ms  p99 ${q(s, 0.99)} ms  p99.9 ${q(s, 0.999)} ms  max ${q(s, 1)} ms\n`,
  );
}
await db.close();

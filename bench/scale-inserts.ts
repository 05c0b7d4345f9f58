// Does an insert slow as its tenant grows? Single-row `POST /rest/v1/contacts` (as an owner,
// `Prefer: return=minimal`) into a tenant of BENCH_SMALL (100) contacts and one of BENCH_LARGE
// (100,000), on the same service (bench/scale-inserts-service.ts, a process of its own; this one is
// the load generator). Rounds alternate the tenants (small, large, small, …), each a run of
// BENCH_SECONDS (3) at BENCH_CONNECTIONS (4) concurrent requests; the rows a round added are
// deleted before the next, so the tenants keep their size. Printed: each tenant's median inserts/s
// over BENCH_ROUNDS (5) rounds and the ratio large / small (goal, issue 28: ≥ 0.9×), per engine
// (BENCH_ENGINES, default postgres,pglite). Never fails on a figure.
//
//   node --import tsx bench/scale-inserts.ts
//   BENCH_SOURCE=/work/main node --import tsx bench/scale-inserts.ts   # the same, on main's code
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { median, startChild } from './child.ts';
import { withScratchDatabase } from './scratch-database.ts';

const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 4);

type Served = { url: string; anonKey: string; tenants: { small: string; large: string } };
export type InsertFigure = {
  engine: string;
  small: number;
  large: number;
  ratio: number;
  rounds: number;
  load: string;
};

/** Inserts for `seconds` at `connections` at once; returns inserts per second. */
async function run(served: Served, token: string, tag: string, seconds: number): Promise<number> {
  const headers = {
    apikey: served.anonKey,
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    prefer: 'return=minimal',
  };
  const end = performance.now() + seconds * 1000;
  let done = 0;
  let n = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const r = await fetch(`${served.url}/rest/v1/contacts`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ first_name: `${tag} ${n++}` }),
        });
        await r.arrayBuffer();
        if (r.status !== 201) throw new Error(`insert: ${r.status}`);
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

/** Deletes what the runs added (first names starting with `tag`), so each tenant keeps its size. */
async function clean(served: Served, token: string, tag: string) {
  const r = await fetch(`${served.url}/rest/v1/contacts?first_name=like.${encodeURIComponent(tag)}*`, {
    method: 'DELETE',
    headers: { apikey: served.anonKey, authorization: `Bearer ${token}` },
  });
  await r.arrayBuffer();
  if (r.status >= 300) throw new Error(`delete: ${r.status}`);
}

/** Interleaved rounds on a running service: the medians of both tenants and their ratio. */
async function measure(engine: string, served: Served): Promise<InsertFigure> {
  const rates = { small: [] as number[], large: [] as number[] };
  const load = loadavg()[0]?.toFixed(1) ?? '?';
  for (let round = 0; round <= ROUNDS; round++) {
    for (const name of ['small', 'large'] as const) {
      const token = served.tenants[name];
      const tag = `bench-${round}`;
      // Round 0 is the warm-up (connections, caches, JIT), not counted.
      const rate = await run(served, token, tag, round === 0 ? 1 : SECONDS);
      await clean(served, token, tag);
      if (round > 0) rates[name].push(rate);
    }
  }
  const small = median(rates.small);
  const large = median(rates.large);
  return {
    engine,
    small,
    large,
    ratio: large / small,
    rounds: ROUNDS,
    load: `${load}–${loadavg()[0]?.toFixed(1)}`,
  };
}

/** The figures on each engine of BENCH_ENGINES; bench/scale.ts calls this too. */
export async function measureScaleInserts(
  engines = (env.BENCH_ENGINES ?? 'postgres,pglite').split(','),
): Promise<InsertFigure[]> {
  const out: InsertFigure[] = [];
  for (const engine of engines) {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-inserts-'));
    const onService = async (dbEnv: Record<string, string>) => {
      const child = await startChild<Served>('scale-inserts-service.ts', { ...dbEnv, BENCH_DATA_DIR: dir });
      try {
        return await measure(engine, child.info);
      } finally {
        await child.stop();
      }
    };
    try {
      const figure =
        engine === 'postgres'
          ? await withScratchDatabase('inserts', (url) => onService({ DATABASE_URL: url }))
          : await onService({});
      if (figure) out.push(figure);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

/** Markdown rows, ready to paste into docs/performance.md. */
export function insertTable(figures: InsertFigure[]): string[] {
  return [
    `| engine | inserts/s at ${env.BENCH_SMALL ?? 100} contacts | inserts/s at ${env.BENCH_LARGE ?? 100_000} contacts | large / small | load average |`,
    '|---|---|---|---|---|',
    ...figures.map(
      (f) =>
        `| ${f.engine} | ${f.small.toFixed(0)} | ${f.large.toFixed(0)} | **${f.ratio.toFixed(2)}×** | ${f.load} |`,
    ),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  console.log(
    `single-row REST inserts, ${ROUNDS} interleaved rounds of ${SECONDS} s at ${CONNECTIONS} connections` +
      (env.BENCH_SOURCE ? `, code and migrations of ${env.BENCH_SOURCE}` : ''),
  );
  for (const line of insertTable(await measureScaleInserts())) console.log(line);
}

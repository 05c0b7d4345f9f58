// What the service costs over the database work it asks for. Three processes: the service
// (bench/rest-service.ts, the real startService), a bare node:http server sending the very same
// statements (bench/rest-baseline.ts), and wrk as the load generator (bench/wrk.ts). For each
// request — one contact by id, a list of 25, an order with its items, a single-row insert — the
// two servers take turns in rounds (service, baseline, service, …), each round a warm-up and a
// measured run; the median of the rounds is printed with the ratios (goals, issue 11: ≥ 0.85×
// the baseline's req/s and ≤ 2× its p99), and the median of each round's own ratio beside it.
// PostgreSQL: a scratch database with 100,000 contacts in the tenant (bench/rest-seed.ts), both
// servers running side by side. PGlite: one process
// owns a data directory, so the servers take turns on the same directory, each started for its
// round and stopped after it (the start is not measured). Never fails on a figure.
//
// BENCH_SECONDS (default 4) per measured run, BENCH_ROUNDS (5), BENCH_CONNECTIONS (32),
// BENCH_ENGINES (pglite,postgres), BENCH_CPU_PROF=<dir> writes the service's CPU profiles there;
// DATABASE_READ_CONNECTIONS sets the service's (and so the baseline's) shared read connections.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CpuUse, cpuMeter } from './cpu.ts';
import type { Fixture } from './rest-service.ts';
import { withScratchDatabase } from './scratch-database.ts';
import { CONNECTIONS, type Load, requireWrk, wrk } from './wrk.ts';

const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 4);
const WARMUP = 1;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 5);
const ENGINES = (env.BENCH_ENGINES ?? 'pglite,postgres').split(',');
const here = path.dirname(fileURLToPath(import.meta.url));

type Running = { url: string; pid: number; stop(): Promise<void> };

/** Starts a bench process and resolves with the URL it reports once it serves. */
function start(script: string, childEnv: Record<string, string>): Promise<Running> {
  const prof =
    env.BENCH_CPU_PROF && script === 'rest-service.ts'
      ? ['--cpu-prof', '--cpu-prof-dir', env.BENCH_CPU_PROF]
      : [];
  const child: ChildProcess = spawn(process.execPath, [...prof, '--import', 'tsx', path.join(here, script)], {
    // stdout (the service's JSON log lines) goes to /dev/null: written, as in a deployment, not kept.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...env, ...childEnv },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before serving`)));
    child.once('message', (m) => {
      resolve({
        url: (m as { url: string }).url,
        pid: child.pid ?? 0,
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
type Measured = Load & { cpu: CpuUse };
const medianLoad = (ls: Measured[]): Measured => ({
  rps: median(ls.map((l) => l.rps)),
  p50: median(ls.map((l) => l.p50)),
  p99: median(ls.map((l) => l.p99)),
  errors: ls.reduce((n, l) => n + l.errors, 0),
  cpu: { server: median(ls.map((l) => l.cpu.server)), postgres: median(ls.map((l) => l.cpu.postgres)) },
});

async function benchEngine(
  engine: string,
  dbEnv: Record<string, string>,
  database?: string,
): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-rest-'));
  const childEnv = { ...dbEnv, BENCH_DATA_DIR: dir, BENCH_FIXTURE: path.join(dir, 'fixture.json') };
  const sideBySide = engine === 'postgres';
  const t0 = Date.now();
  let service: Running | null = await start('rest-service.ts', { ...childEnv, BENCH_SEED: '1' });
  console.log(`${engine}: seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const fixture = JSON.parse(readFileSync(childEnv.BENCH_FIXTURE, 'utf8')) as Fixture;
  let baseline: Running | null = null;
  const loads = fixture.requests.map(() => ({ service: [] as Measured[], baseline: [] as Measured[] }));
  const headers = {
    apikey: fixture.anonKey,
    authorization: `Bearer ${fixture.accessToken}`,
    'content-type': 'application/json',
  };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of ['service', 'baseline'] as const) {
        if (!sideBySide) {
          // One process at a time on a PGlite directory: stop the other before starting this one.
          await (which === 'service' ? baseline : service)?.stop();
          if (which === 'service') baseline = null;
          else service = null;
        }
        if (which === 'service') service ??= await start('rest-service.ts', childEnv);
        else baseline ??= await start('rest-baseline.ts', childEnv);
        const server = which === 'service' ? service : baseline;
        for (const [k, r] of fixture.requests.entries()) {
          const target = { method: r.method, body: r.body, headers };
          await wrk(`${server?.url}${r.path}`, target, WARMUP);
          const cpu = cpuMeter(server?.pid ?? 0, database);
          const load = await wrk(`${server?.url}${r.path}`, target, SECONDS);
          loads[k]?.[which].push({ ...load, cpu: cpu(load.rps * SECONDS) });
        }
      }
    }
  } finally {
    await service?.stop();
    await baseline?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (l: Measured) =>
    `${l.rps.toFixed(0).padStart(6)} req/s  p50 ${l.p50.toFixed(2).padStart(6)} ms  p99 ${l.p99.toFixed(2).padStart(6)} ms` +
    `  cpu/req: server ${l.cpu.server.toFixed(0).padStart(4)} µs, postgres ${l.cpu.postgres.toFixed(0).padStart(4)} µs` +
    (l.errors ? `  (${l.errors} errors)` : '');
  const lines: string[] = [];
  for (const [k, r] of fixture.requests.entries()) {
    const l = loads[k];
    if (!l) continue;
    const [svc, base] = [medianLoad(l.service), medianLoad(l.baseline)];
    const each = (ls: Load[]) => ls.map((x) => x.rps.toFixed(0)).join(' / ');
    console.log(`${engine} ${r.label} (${r.method} ${r.path.replace(/eq\.[0-9a-f-]{36}/, 'eq.<id>')})`);
    console.log(`  service  ${f(svc)}   rounds: ${each(l.service)}`);
    console.log(`  baseline ${f(base)}   rounds: ${each(l.baseline)}`);
    // Each round's two runs are back to back, so their ratio is freed of the machine's drift
    // across rounds (other work on the shared cores comes and goes over minutes).
    const paired = median(l.service.map((x, i) => x.rps / (l.baseline[i]?.rps ?? Number.NaN)));
    lines.push(
      `rest ${engine} ${r.label}: ${(svc.rps / base.rps).toFixed(2)}× the baseline's req/s ` +
        `(per round: ${paired.toFixed(2)}×; goal ≥ 0.85), p99 ${(svc.p99 / base.p99).toFixed(2)}× (goal ≤ 2)`,
    );
  }
  return lines;
}

if (requireWrk()) {
  console.log(
    `wrk -t1 -c${CONNECTIONS}, ${ROUNDS} interleaved rounds of ${SECONDS} s (after ${WARMUP} s warm-up), medians`,
  );
  const out: string[] = [];
  for (const engine of ENGINES) {
    if (engine === 'pglite') out.push(...(await benchEngine('pglite', {})));
    if (engine === 'postgres') {
      const lines = await withScratchDatabase('rest', (url) =>
        benchEngine('postgres', { DATABASE_URL: url }, new URL(url).pathname.slice(1)),
      );
      out.push(...(lines ?? []));
    }
  }
  console.log();
  for (const line of out) console.log(line);
}

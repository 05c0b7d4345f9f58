// What the service costs over the database work it asks for. Three processes: the service
// (bench/rest-service.ts, the real startService), a bare node:http server sending the very same
// statements (bench/rest-baseline.ts), and wrk as the load generator (bench/wrk.ts). For each
// request — one contact by id, a keyset page of 25, an order with its items, a single-row insert —
// the two servers take turns in rounds (service, baseline, service, …), each round a warm-up and a
// measured run; the median of the rounds is printed with the ratios (goals, issue 28: ≥ 0.85× the
// baseline's req/s, ≤ 2× its p99, service CPU per request ≤ 1.3× the baseline's), and the median
// of each round's own ratio beside it.
// The reads name one of BENCH_IDS (2,000) random contacts or one of the 500 orders each, in
// turn, as real traffic does (a wrk script, wrk.ts): one fixed id measured nothing but caches
// keyed by it. The baseline sends the statements the service sent for the first id with the
// request's id in its place. For the reads, the baseline process also answers `/plain` + path with
// the read alone as the owner, no claims: "claims + read" against that is what the claims step
// and RLS cost a bare server (issue 28 goal: ≥ 0.8×); on PostgreSQL, bench/database-cpu.ts then
// reads the same split from one backend's CPU time, without the servers and wrk around it
// (BENCH_DB_CPU_REQUESTS, 20,000, per way and round), and bench/insert-cpu.ts what the insert
// costs PostgreSQL from 1 and 32 connections with and without its ceiling counter
// (BENCH_INSERTS, 3,000, per way and round; BENCH_INSERT_CONNECTIONS, 32).
// Every round runs twice, quiet and beside a CPU-bound neighbour (`stress-ng --cpu 1`, or a busy
// Node loop without it; BENCH_NEIGHBOUR=off skips it): the ratios must hold on a busy machine too.
// PostgreSQL: a scratch database with 100,000 contacts in the tenant (bench/rest-seed.ts), both
// servers running side by side. PGlite: one process
// owns a data directory, so the servers take turns on the same directory, each started for its
// round and stopped after it (the start is not measured). Never fails on a figure.
//
// BENCH_SECONDS (default 4) per measured run, BENCH_ROUNDS (5), BENCH_CONNECTIONS (32),
// BENCH_ENGINES (pglite,postgres), BENCH_IDS (2000; 1 = one fixed id), BENCH_NEIGHBOUR (on),
// BENCH_ONLY=<part of a label> measures only those requests (e.g. "by id"),
// BENCH_CPU_PROF=<dir> writes both servers' CPU profiles there (<dir>/rest-service/, <dir>/rest-baseline/:
// the main thread's file is the one whose name ends in .0.001.cpuprofile, thread 0);
// DATABASE_READ_CONNECTIONS sets the service's (and so the baseline's) shared read connections;
// BENCH_COMPARE=<another checkout> (PostgreSQL only) runs that checkout's service too, as `other`,
// side by side and in the same rounds: an A/B of a change on a machine whose speed drifts between
// runs far more than the change moves it (its own node_modules, or a link to these);
// BENCH_NODE_ARGS go to node before every server's script (e.g. --trace-gc-nvp) and BENCH_STDOUT=<path
// prefix> keeps each server's stdout in <prefix>-<script>.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './child.ts';
import { type CpuUse, cpuMeter } from './cpu.ts';
import { databaseCpu } from './database-cpu.ts';
import { insertCpu } from './insert-cpu.ts';
import type { BenchRequest, Fixture } from './rest-service.ts';
import { withScratchDatabase } from './scratch-database.ts';
import { CONNECTIONS, type Load, requireWrk, wrkPaths } from './wrk.ts';

const env = process.env;
const SECONDS = Number(env.BENCH_SECONDS ?? 4);
const WARMUP = 1;
const ROUNDS = Number(env.BENCH_ROUNDS ?? 5);
const ENGINES = (env.BENCH_ENGINES ?? 'pglite,postgres').split(',');
const ONLY = env.BENCH_ONLY;
const COMPARE = env.BENCH_COMPARE;
const MODES = env.BENCH_NEIGHBOUR === 'off' ? (['quiet'] as const) : (['quiet', 'neighbour'] as const);
type Mode = (typeof MODES)[number];
const here = path.dirname(fileURLToPath(import.meta.url));

type Running = { url: string; pid: number; stop(): Promise<void> };

/** Starts a bench process (of this checkout, or of `dir`'s) and resolves with its URL once it serves. */
function start(script: string, childEnv: Record<string, string>, dir = here): Promise<Running> {
  // One directory per script, files named by Node (process and thread): a fixed --cpu-prof-name
  // made tsx's module-hooks thread and the main thread write the same file, and whichever
  // exited last was the profile kept (often the hooks thread's, idle during the run).
  const prof = env.BENCH_CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', path.join(env.BENCH_CPU_PROF, script.replace(/\.ts$/, ''))]
    : [];
  const nodeArgs = env.BENCH_NODE_ARGS ? env.BENCH_NODE_ARGS.split(' ') : [];
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs, ...prof, '--import', 'tsx', path.join(dir, script)],
    {
      cwd: path.dirname(dir),
      // stdout (the service's JSON log lines) goes to /dev/null: written, as in a deployment, not
      // kept; or, with BENCH_STDOUT, to a file per script (what `--trace-gc-nvp` prints, say).
      stdio: [
        'ignore',
        env.BENCH_STDOUT ? openSync(`${env.BENCH_STDOUT}-${script}`, 'a') : 'ignore',
        'inherit',
        'ipc',
      ],
      env: { ...env, ...childEnv },
    },
  );
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

/** A CPU-bound neighbour on one core until stopped: stress-ng when installed, else a busy loop. */
function neighbour(): () => Promise<void> {
  let stressNg = true;
  try {
    execFileSync('stress-ng', ['--version'], { stdio: 'ignore' });
  } catch {
    stressNg = false;
  }
  const child = stressNg
    ? spawn('stress-ng', ['--cpu', '1', '--quiet'], { stdio: 'ignore' })
    : spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return async () => {
    child.kill('SIGTERM');
    await exited;
  };
}

/** Each request's paths: its path with the first id replaced by each of its ids, shuffled once. */
function pathsOf(r: BenchRequest, prefix = ''): string[] {
  const paths = (r.ids.length ? r.ids : [undefined]).map(
    (id) => `${prefix}${id === undefined ? r.path : r.path.replace(r.ids[0] ?? '', id)}`,
  );
  for (let i = paths.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [paths[i], paths[j]] = [paths[j] as string, paths[i] as string];
  }
  return paths;
}

type Measured = Load & { cpu: CpuUse };
/**
 * The median of each round's own ratio of `of` between two servers. A round's runs are back to
 * back, so their ratio is freed of the machine's drift across rounds (other work on the shared
 * cores comes and goes over minutes).
 */
const perRound = (a: Measured[], b: Measured[], of: (x: Measured) => number = (x) => x.rps) =>
  median(a.map((x, i) => of(x) / (b[i] ? of(b[i]) : Number.NaN))).toFixed(2);
const medianLoad = (ls: Measured[]): Measured => ({
  rps: median(ls.map((l) => l.rps)),
  p50: median(ls.map((l) => l.p50)),
  p99: median(ls.map((l) => l.p99)),
  errors: ls.reduce((n, l) => n + l.errors, 0),
  cpu: {
    server: median(ls.map((l) => l.cpu.server)),
    postgres: median(ls.map((l) => l.cpu.postgres)),
    syscalls: median(ls.map((l) => l.cpu.syscalls)),
  },
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
  if (ONLY) fixture.requests = fixture.requests.filter((r) => r.label.includes(ONLY));
  let baseline: Running | null = null;
  const other =
    COMPARE && sideBySide ? await start('rest-service.ts', childEnv, path.join(COMPARE, 'bench')) : null;
  type Loads = { service: Measured[]; baseline: Measured[]; plain: Measured[]; other: Measured[] };
  const loads = new Map<Mode, Loads[]>(
    MODES.map((m) => [m, fixture.requests.map(() => ({ service: [], baseline: [], plain: [], other: [] }))]),
  );
  const headers = {
    apikey: fixture.anonKey,
    authorization: `Bearer ${fixture.accessToken}`,
    'content-type': 'application/json',
  };
  const paths = fixture.requests.map((r) => pathsOf(r));
  const plainPaths = fixture.requests.map((r) => (r.oneSync && r.readOnly ? pathsOf(r, '/plain') : null));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of MODES) {
        const stopNeighbour = mode === 'neighbour' ? neighbour() : null;
        try {
          // With another checkout's service, the two services take turns at going first.
          const services = round % 2 ? (['other', 'service'] as const) : (['service', 'other'] as const);
          const order = other ? ([...services, 'baseline'] as const) : (['service', 'baseline'] as const);
          for (const which of order) {
            if (!sideBySide) {
              // One process at a time on a PGlite directory: stop the other before starting this one.
              await (which === 'service' ? baseline : service)?.stop();
              if (which === 'service') baseline = null;
              else service = null;
            }
            if (which === 'service') service ??= await start('rest-service.ts', childEnv);
            else baseline ??= await start('rest-baseline.ts', childEnv);
            const server = which === 'service' ? service : which === 'other' ? other : baseline;
            for (const [k, r] of fixture.requests.entries()) {
              const target = { method: r.method, body: r.body, headers };
              const runs: [keyof Loads, string[] | null][] = [[which, paths[k] ?? null]];
              if (which === 'baseline') runs.push(['plain', plainPaths[k] ?? null]);
              for (const [as, ps] of runs) {
                if (!ps) continue;
                await wrkPaths(server?.url ?? '', target, ps, WARMUP);
                const cpu = cpuMeter(server?.pid ?? 0, database);
                const load = await wrkPaths(server?.url ?? '', target, ps, SECONDS);
                loads.get(mode)?.[k]?.[as].push({ ...load, cpu: cpu(load.rps * SECONDS) });
              }
            }
          }
        } finally {
          await stopNeighbour?.();
        }
      }
    }
  } finally {
    await service?.stop();
    await other?.stop();
    await baseline?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (l: Measured) =>
    `${l.rps.toFixed(0).padStart(6)} req/s  p50 ${l.p50.toFixed(2).padStart(6)} ms  p99 ${l.p99.toFixed(2).padStart(6)} ms` +
    `  cpu/req: server ${l.cpu.server.toFixed(0).padStart(4)} µs, postgres ${l.cpu.postgres.toFixed(0).padStart(4)} µs` +
    `  server syscalls/req ${l.cpu.syscalls.toFixed(1)}` +
    (l.errors ? `  (${l.errors} errors)` : '');
  const lines: string[] = [];
  for (const mode of MODES) {
    for (const [k, r] of fixture.requests.entries()) {
      const l = loads.get(mode)?.[k];
      if (!l) continue;
      const [svc, base] = [medianLoad(l.service), medianLoad(l.baseline)];
      const each = (ls: Load[]) => ls.map((x) => x.rps.toFixed(0)).join(' / ');
      const shown = r.path.replace(/\.[0-9a-f-]{36}/, '.<id>');
      const spread = r.ids.length > 1 ? `, ${r.ids.length} ids` : '';
      console.log(`${engine} ${mode} ${r.label} (${r.method} ${shown}${spread})`);
      console.log(`  service  ${f(svc)}   rounds: ${each(l.service)}`);
      console.log(`  baseline ${f(base)}   rounds: ${each(l.baseline)}`);
      lines.push(
        `rest ${engine} ${mode} ${r.label}: ${(svc.rps / base.rps).toFixed(2)}× the baseline's req/s ` +
          `(per round: ${perRound(l.service, l.baseline)}×; goal ≥ 0.85), p99 ${(svc.p99 / base.p99).toFixed(2)}× (goal ≤ 2), ` +
          `server CPU per request ${(svc.cpu.server / base.cpu.server).toFixed(2)}× (goal ≤ 1.3)`,
      );
      if (l.other.length) {
        const them = medianLoad(l.other);
        console.log(`  other    ${f(them)}   rounds: ${each(l.other)}   (${COMPARE})`);
        lines.push(
          `rest ${engine} ${mode} ${r.label}: service at ${(svc.rps / them.rps).toFixed(2)}× the other checkout's ` +
            `req/s (per round: ${perRound(l.service, l.other)}×), server CPU per request ` +
            `${(svc.cpu.server / them.cpu.server).toFixed(2)}× (per round: ${perRound(l.service, l.other, (x) => x.cpu.server)}×)`,
        );
      }
      if (l.plain.length) {
        const plain = medianLoad(l.plain);
        console.log(`  plain    ${f(plain)}   rounds: ${each(l.plain)}   (the read alone, as the owner)`);
        lines.push(
          `rest ${engine} ${mode} ${r.label}: bare claims + read at ${(base.rps / plain.rps).toFixed(2)}× ` +
            `the bare read alone (per round: ${perRound(l.baseline, l.plain)}×; goal ≥ 0.8)`,
        );
      }
    }
  }
  if (dbEnv.DATABASE_URL) {
    lines.push(...(await databaseCpu(dbEnv.DATABASE_URL, fixture)));
    lines.push(...(await insertCpu(dbEnv.DATABASE_URL, fixture)));
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

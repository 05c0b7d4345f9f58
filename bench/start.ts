// How long `svc` takes to be useful (issue 29): from spawning `svc start` on an existing DATA_DIR to
// its first 200 from /health, and a whole `svc keys`, as `bin/svc.js` runs them now (the JavaScript
// bundle, bin/build.mjs, each command loading only its own code) beside the start as it was before
// issue 29: the tree of BENCH_BASELINE_REV (default c586119, the last commit before) exported by
// `git archive` to a scratch directory, sharing this checkout's node_modules, its bin/svc.js loading
// src/ through tsx. Rounds interleave the two; medians printed. The embedded database by default,
// DATABASE_URL for PostgreSQL. BENCH_ROUNDS (default 5). A benchmark, not a test: it never fails on
// a figure.
import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { median } from './child.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const REV = process.env.BENCH_BASELINE_REV ?? 'c586119';
const before = mkdtempSync(path.join(tmpdir(), 'svc-bench-start-before-'));
execSync(`git archive ${REV} | tar -x -C ${before}`, { cwd: root });
symlinkSync(path.join(root, 'node_modules'), path.join(before, 'node_modules'));
const WAYS = {
  bundle: [path.join(root, 'bin/svc.js')],
  tsx: [path.join(before, 'bin/svc.js')],
} as const;
type Way = keyof typeof WAYS;

function run(way: Way, args: string[], env: Record<string, string>, until?: RegExp) {
  const child = spawn(process.execPath, [...WAYS[way], ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const matched = new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = until?.exec(out);
      if (m) resolve(m[1] ?? '');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => (until ? reject(new Error(`exited with ${code}: ${out}`)) : resolve(out)));
  });
  return { child, exited, matched, output: () => out };
}

/** Milliseconds from spawning `svc start` to its first 200 from /health; then stops it. */
async function startToHealth(way: Way, env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const p = run(way, ['start'], env, /svc listening on (\S+)\n/);
  const url = await p.matched;
  for (;;) {
    const res = await fetch(`${url}/health`).catch(() => null);
    if (res?.status === 200) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const ms = performance.now() - t0;
  p.child.kill('SIGTERM');
  await p.exited;
  return ms;
}

async function keys(way: Way, env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const p = run(way, ['keys'], env);
  const code = await p.exited;
  if (code !== 0) throw new Error(`svc keys exited with ${code}: ${p.output()}`);
  return performance.now() - t0;
}

const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-start-'));
const env: Record<string, string> = { DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'warn' };
try {
  // The data directory (and the database's migrations) exist before the first measured start.
  await startToHealth('bundle', env);
  const times = {
    start: { bundle: [] as number[], tsx: [] as number[] },
    keys: { bundle: [] as number[], tsx: [] as number[] },
  };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const way of round % 2 ? (['tsx', 'bundle'] as const) : (['bundle', 'tsx'] as const)) {
      times.start[way].push(await startToHealth(way, env));
      times.keys[way].push(await keys(way, env));
    }
    console.log(
      `round ${round}: start→/health bundle ${times.start.bundle.at(-1)?.toFixed(0)} ms, tsx ${times.start.tsx.at(-1)?.toFixed(0)} ms; ` +
        `keys bundle ${times.keys.bundle.at(-1)?.toFixed(0)} ms, tsx ${times.keys.tsx.at(-1)?.toFixed(0)} ms`,
    );
  }
  const engine = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
  console.log(`\n${engine}, ${ROUNDS} rounds, load average ${loadavg()[0]?.toFixed(1)} (medians)`);
  for (const [what, goal] of [
    ['start', 0.5],
    ['keys', 0.3],
  ] as const) {
    const [b, t] = [median(times[what].bundle), median(times[what].tsx)];
    const label = what === 'start' ? 'svc start → /health' : 'svc keys';
    console.log(
      `${label}: ${b.toFixed(0)} ms against ${t.toFixed(0)} ms before (${REV}, through tsx) = ${(b / t).toFixed(2)}× (goal ≤ ${goal}×)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  rmSync(before, { recursive: true, force: true });
}

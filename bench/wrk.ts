// wrk (https://github.com/wg/wrk) as the load generator, in its own process so that its work is
// never billed to the server measured: one thread, CONNECTIONS keep-alive connections. Requests
// with a method or body other than GET go through a small Lua script, as wrk requires.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const WRK = process.env.WRK ?? '/usr/bin/wrk';
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

export type Load = { rps: number; p50: number; p99: number; errors: number };
export type Target = { method: string; body?: string; headers: Record<string, string> };

/** Says how to get wrk when it is missing, instead of failing later with a spawn error. */
export function requireWrk(): boolean {
  try {
    execFileSync(WRK, ['--version'], { stdio: 'ignore' });
  } catch (err) {
    // wrk --version exits 1 after printing; only a missing binary throws ENOENT.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      console.log(
        `wrk not found at ${WRK}: install it (Debian/Ubuntu: sudo apt-get install wrk), or set WRK=`,
      );
      return false;
    }
  }
  return true;
}

const scripts = mkdtempSync(path.join(tmpdir(), 'svc-wrk-'));
let scriptCount = 0;

function scriptFor(t: Target): string {
  const lua = (s: string) => JSON.stringify(s); // a JSON string is a valid Lua string literal here
  const lines = [`wrk.method = ${lua(t.method)}`];
  if (t.body !== undefined) lines.push(`wrk.body = ${lua(t.body)}`);
  for (const [k, v] of Object.entries(t.headers)) lines.push(`wrk.headers[${lua(k)}] = ${lua(v)}`);
  const file = path.join(scripts, `t${++scriptCount}.lua`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/**
 * A script that sends `t` to each path of `paths` in turn (the order given), each request
 * formatted once at start so that wrk's own cost per request stays what it is for a fixed one.
 */
function pathsScriptFor(t: Target, paths: string[]): [string, string] {
  const lua = (s: string) => JSON.stringify(s);
  const list = path.join(scripts, `p${++scriptCount}.txt`);
  writeFileSync(list, `${paths.join('\n')}\n`);
  const lines = [`wrk.method = ${lua(t.method)}`];
  if (t.body !== undefined) lines.push(`wrk.body = ${lua(t.body)}`);
  for (const [k, v] of Object.entries(t.headers)) lines.push(`wrk.headers[${lua(k)}] = ${lua(v)}`);
  lines.push(
    'local requests = {}',
    'local i = 0',
    'function init(args)',
    '  for line in io.lines(args[1]) do requests[#requests + 1] = wrk.format(nil, line) end',
    'end',
    'function request()',
    '  i = i % #requests + 1',
    '  return requests[i]',
    'end',
  );
  const file = path.join(scripts, `t${++scriptCount}.lua`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return [file, list];
}

/** Drives `base` + each of `paths` in turn for `seconds` (the URL's own path is not requested). */
const pathScripts = new WeakMap<string[], Map<string, [string, string]>>();
export function wrkPaths(base: string, target: Target, paths: string[], seconds: number): Promise<Load> {
  const byTarget = pathScripts.get(paths) ?? new Map<string, [string, string]>();
  pathScripts.set(paths, byTarget);
  const key = JSON.stringify(target);
  const [script, list] = byTarget.get(key) ?? pathsScriptFor(target, paths);
  byTarget.set(key, [script, list]);
  return wrkScript(`${base}${paths[0] ?? '/'}`, script, seconds, [list]);
}

const MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000 };
const ms = (text: string | undefined) => {
  const m = /([\d.]+)(us|ms|s)/.exec(text ?? '');
  return m ? Number(m[1]) * (MS[m[2] as string] ?? 1) : Number.NaN;
};

/** Drives `url` for `seconds`; req/s and latency percentiles as wrk reports them. */
export const wrk = (url: string, target: Target, seconds: number): Promise<Load> =>
  wrkScript(url, scriptFor(target), seconds);

/** The same with a Lua script of the caller's; `scriptArgs` reach its `init(args)`. */
export function wrkScript(
  url: string,
  script: string,
  seconds: number,
  scriptArgs: string[] = [],
): Promise<Load> {
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', script, url];
  if (scriptArgs.length) args.push('--', ...scriptArgs);
  return new Promise((resolve, reject) => {
    execFile(WRK, args, (err, stdout) => {
      if (err) return reject(err);
      const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1];
      const socketErrors = /Socket errors: (.*)/.exec(stdout)?.[1];
      resolve({
        rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? Number.NaN),
        p50: ms(/\s50%\s+(\S+)/.exec(stdout)?.[1]),
        p99: ms(/\s99%\s+(\S+)/.exec(stdout)?.[1]),
        errors: Number(non2xx ?? 0) + (socketErrors ? 1 : 0),
      });
    });
  });
}

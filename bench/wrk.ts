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

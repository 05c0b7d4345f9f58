import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

/** Runs `svc <args>` to completion. */
export function runCli(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts `svc start` and resolves once it prints its URL. */
export async function startCli(env: Record<string, string>) {
  // The whole line, so that a URL split between two chunks of output is never taken in part.
  const listening = /svc listening on (\S+)\n/;
  const { child, output } = await spawnUntil(['start'], env, listening, { cli: true });
  const url = listening.exec(output())?.[1] as string;
  return { child, url, output };
}

/**
 * Runs `svc start` until it either listens or exits: a start that must be refused is told apart
 * from one that wrongly runs (which is then stopped) without waiting on a timer.
 */
export function tryStartCli(env: Record<string, string>) {
  return new Promise<{ listening: string | null; code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'start'], { env: { ...process.env, ...env } });
    let out = '';
    let listening: string | null = null;
    child.stdout.on('data', (d) => {
      out += d;
      const m = /svc listening on (\S+)/.exec(out);
      if (m?.[1] && !listening) {
        listening = m[1];
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ listening, code, output: out }));
  });
}

/**
 * Starts `node <args>` (`cli: true`: `svc <args>`) and resolves once its output matches `ready`;
 * for a process the test then signals (SIGTERM, SIGKILL) itself.
 */
export function spawnUntil(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  { cli = false }: { cli?: boolean } = {},
) {
  return new Promise<{ child: ChildProcess; output: () => string }>((resolve, reject) => {
    const child = spawn(process.execPath, cli ? [BIN, ...args] : args, { env: { ...process.env, ...env } });
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      if (ready.test(out)) resolve({ child, output: () => out });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      reject(new Error(`exited with ${code ?? signal} before ${ready}: ${out}`)),
    );
  });
}

/** Resolves with how a child ended (its exit code, or the signal that ended it). */
export const exited = (child: ChildProcess) =>
  new Promise<number | string | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode ?? child.signalCode);
    else child.once('exit', (code, signal) => resolve(code ?? signal));
  });

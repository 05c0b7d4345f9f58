// A bench server in a process of its own (the service, a baseline), so that the load generator's
// and the other server's work is never billed to it. Started with tsx; once it serves it sends its
// parent one IPC message (its URL and whatever else the bench needs), and it stops on SIGTERM.
import { spawn } from 'node:child_process';
import type { Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export type Child<T> = {
  info: T;
  pid: number;
  send(message: unknown): void;
  /** Sends `message` and resolves with the child's next message (its answer). */
  ask<A>(message: unknown): Promise<A>;
  stop(): Promise<void>;
};

/**
 * Starts bench/<script> with `env` added and resolves with its first message; `nodeArgs` go to
 * node before the script (e.g. --cpu-prof).
 */
export function startChild<T>(
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<Child<T>> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(here, script)], {
    // stdout (a service's JSON log lines) goes to /dev/null: written, as in a deployment, not kept.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before serving`)));
    child.once('message', (info) =>
      resolve({
        info: info as T,
        pid: child.pid ?? 0,
        send: (message) => child.send(message as never),
        ask: <A>(message: unknown) =>
          new Promise<A>((answer) => {
            child.once('message', (a) => answer(a as A));
            child.send(message as never);
          }),
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      }),
    );
  });
}

/** The middle value (the upper one of an even count). */
export const median = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/**
 * The child's side for a bare node:http server: listen on a free port, send the parent its URL,
 * and on SIGTERM stop serving, run `close` (its pool) and exit.
 */
export function serveBare(server: Server, close: () => Promise<unknown>) {
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.send?.({ url: `http://127.0.0.1:${port}` });
  });
  process.once('SIGTERM', async () => {
    server.close();
    server.closeAllConnections();
    await close();
    process.exit(0);
  });
}

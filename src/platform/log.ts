import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';
import { databaseUnavailable } from './db/unavailable.ts';
import { type AppError, toAppError } from './errors.ts';

export type { Logger };

/**
 * JSON lines. Nothing that could carry a secret is ever passed to the logger (no headers, no
 * bodies, no query strings); the redaction list is a second line of defence.
 *
 * Without a destination, lines go to stdout asynchronously: pino's default writes each line with
 * a synchronous write(2) on the request's path, one syscall per access-log line. The async
 * destination writes in the background and batches the lines that arrive while a write is under
 * way. Nothing is lost on the way out: pino flushes it synchronously on process exit (a crash
 * included), and the service flushes it when it stops (main.ts).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'svc' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          '*.password',
          '*.api_key',
          '*.access_token',
          '*.refresh_token',
          '*.authorization',
          '*.apikey',
          '*.webhook_secret',
          '*.secret',
          'password',
          'api_key',
          'token',
          'access_token',
          'webhook_secret',
        ],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** Writes a request's access line; `started` is its `performance.now()` at arrival. */
export type AccessLog = (
  requestId: string,
  method: string,
  path: string,
  status: number,
  started: number,
) => void;

/**
 * The access line, one per request: the same JSON line pino writes for `log.info({req_id,
 * method, path, status, ms}, 'request')`, to the same destination. Its fields are fixed here and
 * carry nothing a redaction path names, and pino's generic serialization of them cost several µs
 * a request. The request id and the method need no escaping (an incoming id must match
 * request-context.ts's pattern; Node accepts only known method names); the path is quoted.
 *
 * A request only records its fields; the lines are written out together, at most ACCESS_FLUSH_MS
 * later (or once ACCESS_FLUSH_LINES wait), as one write. Each write of the async destination is
 * a round trip through libuv's thread pool and a copy of its text: written once per turn of the
 * event loop, the access lines cost a busy service about 10 µs of CPU a request. Formatting them
 * in the batch too, away from the request's own work, was worth about 2% of a cached read's
 * throughput on PGlite (docs/performance.md). Lines written directly to `log` meanwhile (a
 * failure's cause) may come before the access lines of the same interval. Nothing waits past the
 * process: the lines are handed over when it exits (a crash included) and when the service
 * closes (main.ts).
 */
export function accessLog(log: Logger): AccessLog {
  const destination = (log as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  const bound = JSON.stringify(log.bindings()).slice(1, -1);
  const sink: Sink | undefined = destination && { destination, base: bound ? `,${bound}` : '' };
  return (requestId, method, path, status, started) => {
    if (!sink || !log.isLevelEnabled('info')) return;
    const ms = Math.round(performance.now() - started);
    waiting.push({ sink, requestId, method, path, status, ms, at: Date.now() });
    if (waiting.length >= ACCESS_FLUSH_LINES) flushAccessLines();
    else timer ??= setTimeout(flushAccessLines, ACCESS_FLUSH_MS);
  };
}

/** Where a logger's access lines go, and the bindings every one of them carries. */
type Sink = { destination: DestinationStream; base: string };

type Waiting = {
  sink: Sink;
  requestId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  /** Date.now() when the request ended. */
  at: number;
};

const ACCESS_FLUSH_MS = 20;
const ACCESS_FLUSH_LINES = 256;
/** Access lines not yet written, in the order their requests ended. */
let waiting: Waiting[] = [];
let timer: NodeJS.Timeout | undefined;

const line = (w: Waiting, time: string) =>
  `{"level":30,"time":"${time}"${w.sink.base},"req_id":"${w.requestId}","method":"${w.method}","path":${JSON.stringify(w.path)},"status":${w.status},"ms":${w.ms},"msg":"request"}\n`;

/** Writes every waiting access line to its destination, one write per destination. */
export function flushAccessLines(
  write = (destination: DestinationStream, lines: string) => destination.write(lines),
): void {
  clearTimeout(timer);
  timer = undefined;
  const lines = waiting;
  waiting = [];
  const byDestination = new Map<DestinationStream, string>();
  let at = Number.NaN;
  let time = '';
  for (const w of lines) {
    // Requests ending in the same millisecond share its timestamp: formatted once.
    if (w.at !== at) {
      at = w.at;
      time = new Date(at).toISOString();
    }
    const { destination } = w.sink;
    byDestination.set(destination, (byDestination.get(destination) ?? '') + line(w, time));
  }
  for (const [destination, text] of byDestination) write(destination, text);
}

// At exit nothing asynchronous finishes: a write handed to the async destination now would go to
// libuv's thread pool and might never run. Its file descriptor is written directly instead,
// before pino's own exit handler flushes what the destination holds.
process.prependListener('exit', () =>
  flushAccessLines((destination, lines) => {
    const { fd } = destination as { fd?: unknown };
    try {
      if (typeof fd === 'number' && fd >= 0) writeSync(fd, lines);
      else destination.write(lines);
    } catch {
      // The reader is gone (EPIPE): there is no one left to tell.
    }
  }),
);

/**
 * A child of `log` with `bindings`, made when it is first used. Most requests log nothing but
 * their access line (accessLog), and a pino child of the redacting logger costs
 * about 3 µs and 4 KB of garbage per request (docs/performance.md); this costs one Proxy.
 */
export function lazyChild(log: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  return new Proxy(log, {
    get(_target, key) {
      child ??= log.child(bindings);
      const value = Reflect.get(child, key, child);
      return typeof value === 'function' ? value.bind(child) : value;
    },
  });
}

/**
 * Why a request failed, for operators: an error's name, message, SQLSTATE code and stack, never
 * its data (a database error's detail can quote row values). An error carrying a `cause` (the
 * public error a lower one was turned into) is logged by that cause.
 */
export function logFailure(
  log: Logger,
  err: unknown,
  fields: Record<string, unknown> = {},
  msg = 'request failed',
): void {
  const cause = err instanceof Error && err.cause !== undefined ? err.cause : err;
  const { name, message, code, stack } = (cause ?? {}) as Error & { code?: unknown };
  // An outage fails every request alike: one short line each, no stack (nothing to debug here).
  if (databaseUnavailable(cause))
    log.warn({ ...fields, err: { name, message, code } }, 'database unavailable');
  else log.error({ ...fields, err: { name, message, code, stack } }, msg);
}

/** The error a failed request is answered with (errors.ts), a 5xx logged by its cause first. */
export function failedRequest(err: unknown, log: () => Logger): AppError {
  const e = toAppError(err);
  if (e.status >= 500) logFailure(log(), err);
  return e;
}

import pino, { type DestinationStream, type Logger } from 'pino';
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
 * method, path, status, ms}, 'request')`, to the same destination, built as one string. Its
 * fields are fixed here and carry nothing a redaction path names, and pino's generic
 * serialization of them cost several µs a request. The request id and the method need no
 * escaping (an incoming id must match request-context.ts's pattern; Node accepts only known
 * method names); the path is quoted.
 *
 * The lines of one turn of the event loop reach the destination as one write, at the end of the
 * turn: the async destination re-measures the text it holds on every write, so a line at a time
 * under load cost as much again (docs/performance.md). Lines written directly to `log` meanwhile
 * (a failure's cause) may come before the access lines of the same turn, and a crash loses at
 * most that turn's access lines.
 */
export function accessLog(log: Logger): AccessLog {
  const destination = (log as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym];
  const bound = JSON.stringify(log.bindings()).slice(1, -1);
  const base = bound ? `,${bound}` : '';
  let pending = '';
  const flush = () => {
    const lines = pending;
    pending = '';
    destination?.write(lines);
  };
  return (requestId, method, path, status, started) => {
    if (!log.isLevelEnabled('info')) return;
    const ms = Math.round(performance.now() - started);
    if (pending === '') setImmediate(flush);
    pending += `{"level":30,"time":"${new Date().toISOString()}"${base},"req_id":"${requestId}","method":"${method}","path":${JSON.stringify(path)},"status":${status},"ms":${ms},"msg":"request"}\n`;
  };
}

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
  log.error({ ...fields, err: { name, message, code, stack } }, msg);
}

/** The error a failed request is answered with (errors.ts), a 5xx logged by its cause first. */
export function failedRequest(err: unknown, log: () => Logger): AppError {
  const e = toAppError(err);
  if (e.status >= 500) logFailure(log(), err);
  return e;
}

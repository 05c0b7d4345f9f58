import pino, { type DestinationStream, type Logger } from 'pino';

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

/**
 * A logger for lines whose fields are fixed by the code that writes them and carry nothing a
 * redaction path names (the access line: request id, method, path, status, time): the same
 * destination, level, base fields and time format as `log`, without its redaction pass, which
 * costs more than writing such a line. Anything else goes through `log` itself.
 */
export function accessLogger(log: Logger): Logger {
  return log.child({}, { redact: { paths: [] } });
}

/**
 * A child of `log` with `bindings`, made when it is first used. Most requests log nothing but
 * their access line (written by accessLogger), and a pino child of the redacting logger costs
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

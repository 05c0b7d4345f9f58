/**
 * Whether an error says the database cannot be reached right now (stopped, restarting, refusing
 * connections, the connection lost mid-request), rather than refusing what was asked. Such a
 * request is answered 503 with Retry-After (errors.ts), never 500: nothing is wrong with it, and
 * the same request can succeed once the database is back.
 *
 * node-postgres reports a lost or refused connection as a plain Error: a socket's code, or one of
 * its own messages (it gives them no code). The server's own refusals carry a SQLSTATE:
 * connection exceptions (class 08), a shutdown or a start under way (57P01–57P03), and no room
 * for one more connection or its work (class 53 but 53400, as PostgREST maps them).
 */
export function databaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code))
      return code.startsWith('08') || SHUTDOWN.has(code) || (code.startsWith('53') && code !== '53400');
  }
  return DRIVER_MESSAGES.some((m) => err.message.startsWith(m));
}

const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** admin_shutdown, crash_shutdown, cannot_connect_now (starting up, shutting down, recovering). */
const SHUTDOWN = new Set(['57P01', '57P02', '57P03']);

/** node-postgres's and pg-pool's own words for a connection that is gone or never came. */
const DRIVER_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Cannot use a pool after calling end on the pool',
];

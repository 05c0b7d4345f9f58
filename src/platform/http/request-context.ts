import { randomUUID } from 'node:crypto';
import type { BlockList } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { MiddlewareHandler } from 'hono';
import { accessLogger, type Logger, lazyChild } from '../log.ts';
import { clientIp } from './client-ip.ts';
import { addHeaders, type FinalHeaders } from './cors.ts';
import type { AppEnv } from './env.ts';

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * A request id on every response and every log line (a well-formed incoming X-Request-Id is kept,
 * so a trace crosses a gateway), the caller's address, and one access-log line per request.
 * Only method, path, status and timing are logged: never headers, query strings or bodies.
 */
export function requestContext(log: Logger, proxies: BlockList | null): MiddlewareHandler<AppEnv> {
  // The access line's own logger: the same destination and format, without the redaction pass
  // (its fields are the five written below, none of them a redacted name), and not the
  // request's fresh child logger, whose first line costs more: together ~15 µs a request
  // (docs/performance.md). The line is the same JSON as before, req_id after the base fields.
  const access = accessLogger(log);
  return async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && INCOMING_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', requestId);
    c.set('log', lazyChild(log, { req_id: requestId }));
    // X-Request-Id and the CORS headers (cors.ts), set on the final response below.
    const final: FinalHeaders = { list: [['X-Request-Id', requestId]], takenBy: null };
    c.set('finalHeaders', final);
    let socketIp = '';
    try {
      socketIp = getConnInfo(c).remote.address ?? '';
    } catch {
      // Not served by node (app.request in a unit test): no socket to read.
    }
    c.set('clientIp', clientIp(socketIp, c.req.header('x-forwarded-for'), proxies));
    const started = performance.now();
    await next();
    // On the final response, without a copy, unless its handler built it with them (cors.ts).
    if (final.takenBy === null || final.takenBy !== c.res) addHeaders(c, final.list);
    access.info(
      {
        req_id: requestId,
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round(performance.now() - started),
      },
      'request',
    );
  };
}

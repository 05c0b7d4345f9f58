import { randomUUID } from 'node:crypto';
import type { BlockList } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../log.ts';
import { clientIp } from './client-ip.ts';
import { addHeaders } from './cors.ts';
import type { AppEnv } from './env.ts';

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * A request id on every response and every log line (a well-formed incoming X-Request-Id is kept,
 * so a trace crosses a gateway), the caller's address, and one access-log line per request.
 * Only method, path, status and timing are logged: never headers, query strings or bodies.
 */
export function requestContext(log: Logger, proxies: BlockList | null): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const requestId = incoming && INCOMING_ID.test(incoming) ? incoming : randomUUID();
    const reqLog = log.child({ req_id: requestId });
    c.set('requestId', requestId);
    c.set('log', reqLog);
    let socketIp = '';
    try {
      socketIp = getConnInfo(c).remote.address ?? '';
    } catch {
      // Not served by node (app.request in a unit test): no socket to read.
    }
    c.set('clientIp', clientIp(socketIp, c.req.header('x-forwarded-for'), proxies));
    const started = performance.now();
    await next();
    addHeaders(c, [['X-Request-Id', requestId]]); // on the final response, without a copy (cors.ts)
    reqLog.info(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round(performance.now() - started),
      },
      'request',
    );
  };
}

import { randomUUID } from 'node:crypto';
import type { BlockList } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { accessLog, type Logger, lazyChild } from '../log.ts';
import type { RequestDurations } from '../metrics/request-durations.ts';
import { appRouteLabels, isCatchAll } from '../metrics/route-labels.ts';
import { clientIp } from './client-ip.ts';
import { addHeaders, type FinalHeaders } from './cors.ts';
import type { AppEnv } from './env.ts';

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** A well-formed incoming X-Request-Id is kept, so a trace crosses a gateway; else a new one. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming && INCOMING_ID.test(incoming) ? incoming : randomUUID();

/**
 * A request id on every response and every log line (a well-formed incoming X-Request-Id is kept,
 * so a trace crosses a gateway), the caller's address, and one access-log line per request.
 * Only method, path, status and timing are logged: never headers, query strings or bodies.
 */
export function requestContext(
  log: Logger,
  proxies: BlockList | null,
  durations?: RequestDurations,
): MiddlewareHandler<AppEnv> {
  const access = accessLog(log);
  return async (c, next) => {
    const requestId = requestIdOf(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    c.set('log', lazyChild(log, { req_id: requestId }));
    // X-Request-Id and the CORS headers (cors.ts), set on the final response below.
    const final: FinalHeaders = { list: [['X-Request-Id', requestId]] };
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
    // On the final response, without a copy (cors.ts).
    addHeaders(c, final.list);
    access(requestId, c.req.method, c.req.path, c.res.status, started);
    if (durations) {
      const [route, target] = appRouteLabels(templateOf(c), c.req.path, c.get('mcpTarget'));
      durations.observe(route, target, c.req.method, c.res.status, started);
    }
  };
}

/**
 * The template of the route that answered; when that was a catch-all middleware (the body limit
 * refusing, or no route at all), the last route the router matched for the path.
 */
function templateOf(c: Context): string {
  const t = routePath(c);
  return isCatchAll(t) ? routePath(c, -1) : t;
}

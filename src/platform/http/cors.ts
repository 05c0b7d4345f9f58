import type { Context, MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';

const ALLOW_HEADERS = [
  'authorization',
  'apikey',
  'content-type',
  'x-client-info',
  'x-supabase-api-version',
  'x-request-id',
  'prefer',
  'range',
  'accept-profile',
  'content-profile',
  'mcp-protocol-version',
  'mcp-session-id',
];
const EXPOSE_HEADERS = ['Content-Range', 'X-Supabase-Api-Version', 'X-Request-Id', 'Retry-After', 'Location'];
const EXPOSED = EXPOSE_HEADERS.join(',');

type AllowOrigin = (origin: string, c: Context) => string | null;

export type HeaderEntry = [name: string, value: string, append?: boolean];

/**
 * Sets headers on the response a handler returned, in place. hono's `c.header()` after the
 * response exists, and a middleware touching `c.res` before the handler ran, each make
 * @hono/node-server turn its lightweight response into a full WHATWG Response (a body stream,
 * Headers, a copy of every header): four Response objects per request, measured at 7 % of the
 * service's CPU on a primary-key read (docs/performance.md). Live headers are changed directly;
 * a response whose headers are immutable (a fetched one) goes through `c.header()`, which copies.
 */
export function addHeaders(c: Context, headers: HeaderEntry[]) {
  try {
    const live = c.res.headers;
    for (const [name, value, append] of headers) {
      if (append) live.append(name, value);
      else live.set(name, value);
    }
  } catch {
    for (const [name, value, append] of headers) c.header(name, value, { append });
  }
}

/**
 * The headers every response gets from the outer middleware (X-Request-Id, CORS), known before
 * the handler runs. Each middleware pushes its own with `finalHeader` before `next()`, and the
 * outermost one (requestContext) sets them all on the final response with addHeaders, unless a
 * handler already built its response with them (`takeFinalHeaders`): then they are in the
 * response's plain header object, and even `c.res.headers` is never asked for (asking builds a
 * Headers object, ~20 µs a request with the copies it brings; docs/performance.md).
 */
export type FinalHeaders = { list: HeaderEntry[]; takenBy: Response | null };

export function finalHeader(c: Context, entry: HeaderEntry): void {
  (c.get('finalHeaders') as FinalHeaders | undefined)?.list.push(entry);
}

/**
 * For a handler that builds its own Response from a plain header object: the final headers to
 * put into that object (lower-case names, as Headers gives them), or null when there are none to
 * take (no requestContext: a unit test's bare router). `claim` must then be called with the
 * Response built, so that requestContext knows that this response, and only it, has them.
 */
export function takeFinalHeaders(c: Context): { entries: HeaderEntry[]; claim(res: Response): void } | null {
  const final = c.get('finalHeaders') as FinalHeaders | undefined;
  if (!final || final.takenBy) return null;
  return {
    entries: final.list,
    claim: (res) => {
      final.takenBy = res;
    },
  };
}

/**
 * CORS for the whole surface, as hono's `cors()` answers it: preflights by hono's middleware
 * itself; every other request gets Access-Control-Allow-Origin (when `allowOrigin` grants one),
 * the exposed headers and `Vary: Origin`, set once on the final response by requestContext (see
 * FinalHeaders), which must be mounted before this.
 */
export function corsHeaders(allowOrigin: AllowOrigin): MiddlewareHandler {
  const preflight = cors({
    origin: allowOrigin,
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowHeaders: ALLOW_HEADERS,
    exposeHeaders: EXPOSE_HEADERS,
    maxAge: 86400,
  });
  return async (c, next) => {
    if (c.req.method === 'OPTIONS') return preflight(c, next);
    const origin = allowOrigin(c.req.header('origin') ?? '', c);
    // Set on the final response by requestContext, with X-Request-Id (see FinalHeaders).
    if (origin) finalHeader(c, ['Access-Control-Allow-Origin', origin]);
    finalHeader(c, ['Access-Control-Expose-Headers', EXPOSED]);
    finalHeader(c, ['Vary', 'Origin', true]);
    return next();
  };
}

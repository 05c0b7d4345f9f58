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
  // @supabase/storage-js uploads
  'x-upsert',
  'cache-control',
  'x-metadata',
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
 * outermost one (requestContext) sets them all on the final response with addHeaders.
 */
export type FinalHeaders = { list: HeaderEntry[] };

export function finalHeader(c: Context, entry: HeaderEntry): void {
  (c.get('finalHeaders') as FinalHeaders | undefined)?.list.push(entry);
}

/** What `corsHeaders` gives a request from any origin on every surface but the MCP endpoint. */
export const PUBLIC_CORS_HEADERS: Readonly<Record<string, string>> = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSED,
  vary: 'Origin',
};

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

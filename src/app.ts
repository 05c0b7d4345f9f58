import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { authRoutes } from './auth/routes.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import { metaReceiptHandler } from './functions/meta-receipt-server.ts';
import { functionRoutes, WEBHOOK_RECEIVERS } from './functions/routes.ts';
import { mcpPostHandler } from './mcp/http.ts';
import { MCP_ALIAS, originPolicy } from './mcp/origin.ts';
import { mcpPathOf } from './mcp/protected-resource.ts';
import { protectedResourceRoutes } from './mcp/protected-resource-routes.ts';
import { mcpRoutes } from './mcp/route.ts';
import { oauthRoutes } from './oauth/routes.ts';
import { AppError, errorBody, payloadTooLarge, serviceUnavailable } from './platform/errors.ts';
import { trustedProxies } from './platform/http/client-ip.ts';
import { closeAfterResponse } from './platform/http/connection.ts';
import { corsHeaders } from './platform/http/cors.ts';
import { newRouter, openApiDocument } from './platform/http/openapi.ts';
import { requestContext } from './platform/http/request-context.ts';
import { accessLog, failedRequest, logFailure } from './platform/log.ts';
import { MAX_MEDIA_BYTES } from './platform/media-type.ts';
import { isMetricsRequest, publicMetrics } from './platform/metrics/endpoint.ts';
import { restHandler } from './rest/server.ts';
import type { Services } from './services.ts';
import { storageErrorFields } from './storage/errors.ts';
import { storageRoutes } from './storage/routes.ts';

/**
 * What each part of the surface requires, as the middleware mounted below enforces it (first
 * match wins); a route that differs declares `security` in its own definition. Public: the JWKS,
 * agent self-registration, the key exchange and the webhook receivers (signed by the provider).
 */
const SECURITY: [prefix: string, security: Record<string, string[]>[]][] = [
  ['/auth/v1/.well-known/', []],
  ['/auth/v1/user', [{ apikey: [], bearer: [] }]],
  ['/auth/v1/logout', [{ apikey: [], bearer: [] }]],
  ['/auth/v1/', [{ apikey: [] }]],
  ['/functions/v1/agent-register', []],
  ['/functions/v1/agent-auth', []],
  ['/functions/v1/whatsapp-webhook', []],
  ['/functions/v1/meta-webhook', []],
  ['/functions/v1/', [{ bearer: [] }]],
];
const securityOf = (path: string) => SECURITY.find(([prefix]) => path.startsWith(prefix))?.[1] ?? [];

/** The largest upload body: the largest media file, and room for multipart framing around it. */
const UPLOAD_LIMIT_BYTES = MAX_MEDIA_BYTES + 1024 * 1024;

/** The whole HTTP surface: middleware order, route mounting, and the one error mapper. */
export function buildApp(s: Services) {
  const app = newRouter();
  app.use('*', requestContext(s.log, trustedProxies(s.config.trustProxy), s.metrics.requests));
  const mcpOrigins = originPolicy(s.config, s.publicUrl);
  // Any page may call the APIs with a bearer token, but the MCP endpoint only its own origins.
  app.use(
    '*',
    corsHeaders((origin, c) =>
      !mcpPathOf(c.req.path) ? '*' : mcpOrigins.allowsOrigin(origin) ? origin : null,
    ),
  );
  // Webhook receivers take what providers send (whole orders); everything else the general limit.
  const receivers = new Set(WEBHOOK_RECEIVERS.map((name) => `/functions/v1/${name}`));
  const limitOf = (c: Context) =>
    isUpload(c)
      ? UPLOAD_LIMIT_BYTES
      : receivers.has(c.req.path)
        ? s.config.webhookBodyLimitBytes
        : s.config.bodyLimitBytes;
  const isUpload = (c: Context) =>
    (c.req.method === 'POST' || c.req.method === 'PUT') &&
    c.req.path.startsWith('/storage/v1/object/') &&
    !/^\/storage\/v1\/object\/(list|sign)\//.test(c.req.path);
  const tooLarge = (c: Context): never => {
    // The rest of the body is never read, so this connection must not carry another request.
    closeAfterResponse(c);
    throw payloadTooLarge(limitOf(c));
  };
  const generalBody = bodyLimit({ maxSize: s.config.bodyLimitBytes, onError: tooLarge });
  const webhookBody = bodyLimit({ maxSize: s.config.webhookBodyLimitBytes, onError: tooLarge });
  // hono's bodyLimit asks `c.req.raw.body` first, which makes @hono/node-server build the whole
  // WHATWG Request (Headers, AbortSignal, body stream) that its lightweight request never builds
  // otherwise. GET and HEAD carry no body here; a body with a Content-Length is held to it by
  // Node's HTTP parser, so the header is its size (bodyLimit decides the same way). Only a
  // chunked body is counted by bodyLimit as it streams in.
  app.use('*', (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const length = c.req.header('content-length');
    if (length === undefined || c.req.header('transfer-encoding') !== undefined) {
      // Uploads are held to their media type's limit by the route as they stream
      // (src/storage/upload-body.ts), never buffered here.
      if (isUpload(c)) return next();
      return receivers.has(c.req.path) ? webhookBody(c, next) : generalBody(c, next);
    }
    return Number.parseInt(length, 10) > limitOf(c) ? tooLarge(c) : next();
  });

  app.get('/health', async (c) => {
    try {
      await s.db.query('select 1');
      return c.json({ status: 'ok', database: s.db.engine }, 200);
    } catch (err) {
      logFailure(c.get('log'), err, {}, 'health check failed');
      const e = serviceUnavailable('The database does not answer');
      for (const [k, v] of Object.entries(e.headers)) c.header(k, v);
      return c.json(errorBody(e), 503);
    }
  });
  app.route('/auth/v1', authRoutes(s));
  app.route('/functions/v1', functionRoutes(s));
  app.route('/storage/v1', storageRoutes(s));
  // MCP sign-in (issue 31): the endpoint at /mcp, its resource metadata, the authorization server.
  app.route('/', mcpRoutes(s, { path: MCP_ALIAS, route: MCP_ALIAS }));
  app.route('/', protectedResourceRoutes(s));
  app.route('/', oauthRoutes(s));
  let doc: ReturnType<typeof openApiDocument> | undefined;
  app.get('/openapi.json', (c) => {
    // Built on first request, once every route is mounted; routes never change afterwards.
    doc ??= openApiDocument(
      app,
      {
        openapi: '3.1.0',
        info: {
          title: 'svc: business operations service',
          version: '1.0.0',
          description: 'Identity provider (/auth/v1) and edge functions (/functions/v1).',
        },
        servers: [{ url: s.publicUrl }],
      },
      securityOf,
    );
    return c.json(doc, 200);
  });

  app.route('/', dashboardRoutes({ anonKey: s.keys.anonKey }));

  app.notFound((c) =>
    c.json(errorBody(new AppError(404, 'not_found', `No route for ${c.req.method} ${c.req.path}`)), 404),
  );
  app.onError((err, c) => {
    // Every surface's 5xx but /rest/v1's passes here (that one's handler does the same), so each
    // is logged once with its cause (MCP tool and resource failures, answered inside JSON-RPC, are
    // logged where src/mcp catches them).
    const e = failedRequest(err, () => c.get('log') ?? s.log);
    for (const [k, v] of Object.entries(e.headers)) c.header(k, v);
    const body: Record<string, unknown> = errorBody(e);
    // @supabase/auth-js reads GoTrue's fields: code (API version 2024-01-01), error_code, msg.
    if (c.req.path.startsWith('/auth/v1'))
      Object.assign(body, { code: e.code, error_code: e.code, msg: e.message });
    // @supabase/storage-js reads Supabase storage's statusCode and code (src/storage/errors.ts).
    if (c.req.path.startsWith('/storage/v1')) Object.assign(body, storageErrorFields(e));
    return c.json(body, e.status as 400);
  });
  return app;
}

/** Whether a request is /rest/v1's (src/rest/server.ts); its CORS preflights are the app's. */
const isRest = (req: IncomingMessage) => {
  const url = req.url ?? '';
  return (
    url.startsWith('/rest/v1') &&
    (url.length === 8 || url[8] === '/' || url[8] === '?') &&
    req.method !== 'OPTIONS'
  );
};

/**
 * The server's request listener: /rest/v1 to its own handler, Meta's webhook deliveries to theirs
 * (src/functions/meta-receipt-server.ts), the MCP endpoint's plain POSTs to
 * theirs (src/mcp/http.ts), /metrics to the metrics when METRICS_TOKEN is set
 * (src/platform/metrics/endpoint.ts), every other request to the app. Its promise settles once
 * the request is answered (server-lifecycle.ts waits for it at a stop).
 */
export function requestListener(s: Services): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const app = getRequestListener(buildApp(s).fetch);
  const rest = restHandler(s);
  const mcp = mcpPostHandler(s);
  const meta = metaReceiptHandler(s);
  const metrics = publicMetrics(s.metrics, s.config.metrics.token, accessLog(s.log));
  return (req, res) =>
    isRest(req)
      ? rest(req, res)
      : meta.takes(req)
        ? meta.handle(req, res)
        : mcp.takes(req)
          ? mcp.handle(req, res)
          : metrics && isMetricsRequest(req)
            ? metrics(req, res)
            : app(req, res);
}

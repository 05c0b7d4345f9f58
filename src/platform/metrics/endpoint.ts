import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError, errorBody, methodNotAllowed, unauthorized, withHeaders } from '../errors.ts';
import { bearerChallenge } from '../http/authenticate.ts';
import { requestIdOf } from '../http/request-context.ts';
import type { AccessLog } from '../log.ts';
import type { Metrics } from './metrics.ts';

/**
 * GET /metrics, two ways (docs/decisions.md, "Metrics"): on the public port only when
 * METRICS_TOKEN is set and the scraper sends it as a bearer token (404 without the setting, as for
 * any unknown path; 401 without the token or with another), and on METRICS_PORT, a listener of its
 * own (127.0.0.1 by default) that serves nothing else and asks for no token.
 */

/** Whether a request is for the public port's /metrics (with or without a query). */
export const isMetricsRequest = (req: IncomingMessage) => {
  const url = req.url ?? '';
  return url === '/metrics' || url.startsWith('/metrics?');
};

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The bearer token compared in constant time: both sides hashed first, so lengths match too. */
export function tokenCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return (authorization) => {
    const given = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
    return given !== undefined && timingSafeEqual(digest(given), expected);
  };
}

/** Writes an error as every surface does: `{error, message, details}` and its headers. */
function writeError(res: ServerResponse, e: AppError, head: boolean): number {
  const body = JSON.stringify(errorBody(e));
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(e.headers)) headers[k.toLowerCase()] = v;
  headers['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(e.status, headers);
  res.end(head ? undefined : body);
  return e.status;
}

/** Answers a /metrics request; `allowed` says whether this caller may read them. Returns the status. */
export async function answerMetrics(
  metrics: Metrics,
  req: IncomingMessage,
  res: ServerResponse,
  allowed: boolean,
): Promise<number> {
  const head = req.method === 'HEAD';
  if (!allowed) {
    const message = 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>';
    return writeError(
      res,
      withHeaders(unauthorized(message), { 'WWW-Authenticate': bearerChallenge(message, 'metrics') }),
      head,
    );
  }
  if (req.method !== 'GET' && !head)
    return writeError(res, methodNotAllowed(['GET', 'HEAD'], 'Use GET'), false);
  const m = await metrics.scrape();
  res.writeHead(200, {
    'content-type': m.contentType,
    'cache-control': 'no-store',
    'content-length': String(Buffer.byteLength(m.body)),
  });
  res.end(head ? undefined : m.body);
  return 200;
}

/** The METRICS_PORT listener: /metrics and nothing else, no token (it is not the public port). */
export async function listenMetrics(
  metrics: Metrics,
  port: number,
  host: string,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    if (!isMetricsRequest(req)) {
      writeError(res, new AppError(404, 'not_found', 'Only /metrics is served here'), req.method === 'HEAD');
      return;
    }
    answerMetrics(metrics, req, res, true).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The public port's /metrics when METRICS_TOKEN is set, with a request id and an access line as
 * every request has (request-context.ts); undefined when it is not set (the app answers 404).
 */
export function publicMetrics(
  metrics: Metrics,
  token: string | undefined,
  access: AccessLog,
): ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined {
  if (!token) return undefined;
  const allowed = tokenCheck(token);
  return async (req, res) => {
    const started = performance.now();
    const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
    res.setHeader('x-request-id', requestId);
    const status = await answerMetrics(metrics, req, res, allowed(req.headers.authorization));
    const method = req.method ?? 'GET';
    metrics.requests.observe('/metrics', '', method, status, started);
    access(requestId, method, '/metrics', status, started);
  };
}

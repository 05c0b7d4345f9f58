import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorBody, notFound } from '../platform/errors.ts';
import { readBytes, refuseDeclaredTooLarge } from '../platform/http/body.ts';
import { addressKey, clientIp, trustedProxies } from '../platform/http/client-ip.ts';
import { PUBLIC_CORS_HEADERS } from '../platform/http/cors.ts';
import { requestIdOf } from '../platform/http/request-context.ts';
import { accessLog, failedRequest, lazyChild } from '../platform/log.ts';
import { FUNCTION_ROUTE } from '../platform/metrics/route-labels.ts';
import { hitEach } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';
import { NAMES, receiveMetaDelivery } from './whatsapp-webhook.ts';

// Meta's deliveries (POST whatsapp-webhook and meta-webhook) as a plain Node handler, before the
// Hono app, as /rest/v1 is (src/rest/server.ts, docs/performance.md "/rest/v1 outside the Hono
// app"): a receipt's own work is one HMAC and one insert, and the app's middleware chain cost the
// service several times the bare server's CPU per delivery. It does what the chain and the route
// do, in the same order and with the same functions: request id, CORS headers, access line and
// request duration; the webhook body limit (declared length first, then as the body streams); the
// receiver's 404 when unconfigured; the per-address limit; then receiveMetaDelivery. Errors are the
// one error body, a 5xx logged with its cause.

const PATHS = new Map(NAMES.map((name) => [`/functions/v1/${name}`, name]));
const RECEIVED = '{"received":true}';

export function metaReceiptHandler(s: Services) {
  const access = accessLog(s.log);
  const proxies = trustedProxies(s.config.trustProxy);
  const limit = s.config.webhookBodyLimitBytes;
  /** The function's name when the request is a delivery this handler takes. */
  const nameOf = (req: IncomingMessage) => {
    if (req.method !== 'POST') return undefined;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    return PATHS.get(q < 0 ? url : url.slice(0, q));
  };
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    refuseDeclaredTooLarge(req, res, limit);
    const { appSecret, verifyToken } = s.config.meta;
    if (!appSecret || !verifyToken) throw notFound('receiver');
    const ip = clientIp(req.socket.remoteAddress ?? '', forwardedFor(req), proxies);
    await hitEach([[s.limits.webhookPerIp, addressKey(ip), 'webhook deliveries from this address']]);
    const raw = await readBytes(req, res, limit);
    const signature = req.headers['x-hub-signature-256'];
    await receiveMetaDelivery(s, raw, typeof signature === 'string' ? signature : undefined);
  }
  return {
    takes: (req: IncomingMessage) => nameOf(req) !== undefined,
    handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const started = performance.now();
      const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
      const name = nameOf(req) as string;
      const url = req.url ?? '';
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      return answer(req, res)
        .then(
          () => {
            send(res, 200, RECEIVED, requestId, {});
            return 200;
          },
          (err) => {
            const e = failedRequest(err, () => lazyChild(s.log, { req_id: requestId }));
            send(res, e.status, JSON.stringify(errorBody(e)), requestId, e.headers);
            return e.status;
          },
        )
        .then((status) => {
          access(requestId, 'POST', path, status, started);
          s.metrics.requests.observe(FUNCTION_ROUTE, name, 'POST', status, started);
        });
    },
  };
}

const forwardedFor = (req: IncomingMessage) => {
  const h = req.headers['x-forwarded-for'];
  return Array.isArray(h) ? h.join(',') : h;
};

function send(
  res: ServerResponse,
  status: number,
  body: string,
  requestId: string,
  headers: Record<string, string>,
) {
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': requestId,
    ...PUBLIC_CORS_HEADERS,
  });
  res.end(body);
}

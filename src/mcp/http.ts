import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { errorBody } from '../platform/errors.ts';
import { PUBLIC_CORS_HEADERS } from '../platform/http/cors.ts';
import { requestIdOf } from '../platform/http/request-context.ts';
import { accessLog, failedRequest, lazyChild } from '../platform/log.ts';
import { MCP_ROUTE, OTHER } from '../platform/metrics/route-labels.ts';
import type { Services } from '../services.ts';
import { MCP_PATH, originPolicy } from './origin.ts';
import { isText, type McpPost } from './post.ts';
import { mcpPathOf } from './protected-resource.ts';
import { answerPost } from './route.ts';

/**
 * The MCP endpoint's POSTs as a plain Node request handler, outside the Hono app, as /rest/v1 is
 * (src/rest/server.ts): on a tool call the app's middleware chain (request context, CORS, body
 * limit, router) and the WHATWG Request and Headers it builds cost more of the service's CPU than
 * the SDK's handling (docs/performance.md, "MCP tool call vs REST read"). It does what that chain
 * does for these requests, with the same functions: request id, CORS headers and access line
 * (request-context.ts, cors.ts, log.ts), then route.ts's answerPost, and errors in the one error
 * body, a 5xx logged with its cause. It takes only the plain case: a declared length within the
 * body limit, an Origin and Host the policy accepts; anything else (a chunked or too large body,
 * a refused origin, other methods, preflights) is the app's, which answers as it always did.
 */
export function mcpPostHandler(s: Services) {
  const policy = originPolicy(s.config, s.publicUrl);
  const access = accessLog(s.log);
  const limit = s.config.bodyLimitBytes;
  return {
    takes(req: IncomingMessage): boolean {
      if (req.method !== 'POST') return false;
      if (!pathOf(req)) return false;
      const length = req.headers['content-length'];
      if (length === undefined || req.headers['transfer-encoding'] !== undefined) return false;
      if (Number.parseInt(length, 10) > limit) return false;
      return !policy.refusal({ origin: req.headers.origin, host: req.headers.host });
    },

    async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
      const started = performance.now();
      const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
      const log = lazyChild(s.log, { req_id: requestId });
      let status: number;
      const headers: Record<string, string> = {};
      let body: string | null;
      const path = pathOf(req) ?? MCP_PATH;
      const post: McpPost = {
        path,
        authorization: req.headers.authorization,
        text: once(() => textOf(req)),
        request: lightRequest(req),
        withBody: (text) =>
          new Request(`http://localhost${req.url}`, {
            method: 'POST',
            headers: headerList(req.headers),
            body: text,
          }),
        log,
        target: undefined,
      };
      try {
        const answer = await answerPost(s, post);
        status = answer.status;
        if (isText(answer)) {
          Object.assign(headers, answer.headers);
          body = answer.body;
        } else {
          answer.headers.forEach((v, k) => {
            headers[k] = v;
          });
          body = status === 202 ? null : await answer.text();
        }
      } catch (err) {
        const e = failedRequest(err, () => log);
        status = e.status;
        headers['content-type'] = 'application/json';
        for (const [k, v] of Object.entries(e.headers)) headers[k.toLowerCase()] = v;
        body = JSON.stringify(errorBody(e));
      }
      headers['x-request-id'] = requestId;
      // corsHeaders' answer for this endpoint: its own origins only, never `*`.
      const origin = req.headers.origin;
      if (origin && policy.allowsOrigin(origin)) headers['access-control-allow-origin'] = origin;
      headers['access-control-expose-headers'] = PUBLIC_CORS_HEADERS[
        'access-control-expose-headers'
      ] as string;
      headers.vary = 'Origin';
      if (body !== null) headers['content-length'] = String(Buffer.byteLength(body));
      res.writeHead(status, headers);
      res.end(body ?? undefined);
      access(requestId, 'POST', path, status, started);
      s.metrics.requests.observe(MCP_ROUTE, post.target ?? OTHER, 'POST', status, started);
    },
  };
}

/** The endpoint path a request's URL names (either of MCP_PATHS, with or without a query). */
const pathOf = (req: IncomingMessage) => {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return mcpPathOf(q < 0 ? url : url.slice(0, q));
};

const once = <T>(f: () => Promise<T>) => {
  let p: Promise<T> | undefined;
  return () => {
    p ??= f();
    return p;
  };
};

function textOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v);

const headerList = (h: IncomingHttpHeaders): [string, string][] =>
  Object.entries(h).flatMap(([k, v]) => {
    const value = headerValue(v);
    return value === undefined ? [] : [[k, value] as [string, string]];
  });

/**
 * What the SDK's transport reads of a POST (method, URL, `headers.get` and `headers.entries`),
 * straight from Node's parsed headers: a WHATWG Request and its Headers, built for nothing else,
 * were a good part of a call's cost. The body is never read from it (answerPost passes it parsed).
 */
function lightRequest(req: IncomingMessage): Request {
  const h = req.headers;
  return {
    method: 'POST',
    url: `http://localhost${req.url}`,
    headers: {
      get: (name: string) => headerValue(h[name.toLowerCase()]) ?? null,
      has: (name: string) => h[name.toLowerCase()] !== undefined,
      entries: () => headerList(h)[Symbol.iterator](),
    },
  } as unknown as Request;
}

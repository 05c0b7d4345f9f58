import { subscribe } from 'node:diagnostics_channel';
import type {
  ClientRequest,
  IncomingMessage as ClientResponse,
  IncomingMessage,
  ServerResponse,
} from 'node:http';
import { context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { isTracingSuppressed } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { requestIdOf } from '../http/request-context.ts';

/**
 * Traces, only when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md "Traces"): a server
 * span per HTTP request with its request id, a span per database statement and transaction under
 * it (tracing-database.ts), and a span per outside call made with fetch (Graph API, Shopify,
 * Stripe's fetch client) under whatever span is active, sent over OTLP/HTTP (JSON) in batches.
 * Unset, nothing here is loaded into the request path: no wrapper, no context lookups.
 *
 * No global tracer provider is registered (tests start several services in one process); each
 * service passes its tracer down. The context manager (AsyncLocalStorage) is process-wide, set
 * once, and costs nothing while no span is active.
 */
export type Tracing = {
  tracer: Tracer;
  /** The HTTP listener with a server span around each request (`tracedListener`). */
  listener(l: Listener): Listener;
  /** Sends what is waiting and stops the exporter. */
  shutdown(): Promise<void>;
};

let contextManagerSet = false;

export function startTracing(endpoint: string, serviceName: string): Tracing {
  if (!contextManagerSet) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerSet = true;
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }), {
        scheduledDelayMillis: 1000,
      }),
    ],
  });
  const tracer = provider.getTracer('svc');
  traceOutsideCalls(tracer);
  return {
    tracer,
    listener: (l) => tracedListener(tracer, l),
    shutdown: async () => {
      outsideTracer = outsideTracer === tracer ? undefined : outsideTracer;
      await provider.shutdown();
    },
  };
}

/**
 * The server span of a request: named by method, with the path (never the query, which may hold
 * a token), the status, and the request id, decided here so the handlers keep it (a well-formed
 * incoming X-Request-Id is kept by every handler, request-context.ts).
 */
type Listener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

function tracedListener(tracer: Tracer, listener: Listener): Listener {
  return (req, res) => {
    const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
    req.headers['x-request-id'] = requestId;
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const method = req.method ?? 'GET';
    return tracer.startActiveSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': method,
          'url.path': q < 0 ? url : url.slice(0, q),
          'svc.request_id': requestId,
        },
      },
      (span) => {
        res.once('close', () => {
          span.setAttribute('http.response.status_code', res.statusCode);
          if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        });
        return listener(req, res);
      },
    );
  };
}

/** The tracer outside calls are recorded with: the last service started in this process. */
let outsideTracer: Tracer | undefined;
let outsideSubscribed = false;
const outsideSpans = new WeakMap<object, Span>();

/** The tracer for an outside call now: only under an active span, never the exporter's own. */
const activeTracer = (): Tracer | undefined => {
  const active = context.active();
  if (!outsideTracer || isTracingSuppressed(active) || !trace.getSpan(active)) return undefined;
  return outsideTracer;
};

const clientSpan = (t: Tracer, method: string, host: string, path: string) =>
  t.startSpan(`${method} ${host}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'http.request.method': method,
      'server.address': host,
      'url.path': path.split('?')[0] as string,
    },
  });

/**
 * Outside calls made with fetch, through undici's diagnostics channels (Node's fetch publishes
 * them), and with node:http (media downloads), through Node's own: a client span per request
 * while a span is active, with the method, host and path (no query: Graph and Shopify URLs may
 * carry tokens), ended by the response's end or an error. The exporter's own requests run with
 * tracing suppressed and make none.
 */
function traceOutsideCalls(tracer: Tracer): void {
  outsideTracer = tracer;
  if (outsideSubscribed) return;
  outsideSubscribed = true;
  subscribe('undici:request:create', (message) => {
    const { request } = message as { request: { origin: string; method: string; path: string } };
    const t = activeTracer();
    if (!t) return;
    let host = request.origin;
    try {
      host = new URL(request.origin).host;
    } catch {
      // an origin undici accepted is a URL; keep it as given otherwise
    }
    outsideSpans.set(request, clientSpan(t, request.method, host, request.path));
  });
  subscribe('http.client.request.start', (message) => {
    const { request } = message as { request: ClientRequest };
    const t = activeTracer();
    if (!t) return;
    const host = request.getHeader('host');
    const span = clientSpan(t, request.method, typeof host === 'string' ? host : request.host, request.path);
    outsideSpans.set(request, span);
    request.once('error', (err) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
      span.end();
      outsideSpans.delete(request);
    });
  });
  subscribe('http.client.response.finish', (message) => {
    const { request, response } = message as { request: ClientRequest; response: ClientResponse };
    const span = outsideSpans.get(request);
    if (!span) return;
    span.setAttribute('http.response.status_code', response.statusCode ?? 0);
    if ((response.statusCode ?? 0) >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    outsideSpans.delete(request);
  });
  subscribe('undici:request:headers', (message) => {
    const { request, response } = message as { request: object; response: { statusCode: number } };
    const span = outsideSpans.get(request);
    span?.setAttribute('http.response.status_code', response.statusCode);
    if (span && response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  });
  subscribe('undici:request:trailers', (message) => {
    const { request } = message as { request: object };
    outsideSpans.get(request)?.end();
    outsideSpans.delete(request);
  });
  subscribe('undici:request:error', (message) => {
    const { request, error } = message as { request: object; error: Error };
    const span = outsideSpans.get(request);
    if (!span) return;
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    span.end();
    outsideSpans.delete(request);
  });
}

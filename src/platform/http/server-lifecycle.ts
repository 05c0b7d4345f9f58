import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';

/** A request listener whose promise settles once its handler has answered (or given up). */
export type Listener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export type ServerLifecycle = {
  server: Server;
  /** From now on requests go to `listener`; those that arrived while starting go first. */
  bind(listener: Listener): void;
  /** Starting failed: the requests waiting, and any more, are refused. */
  fail(): void;
  /**
   * Stops taking requests and waits for those in flight to be answered; past `timeoutMs` the
   * connections left are cut. Resolves once the server holds no connection.
   */
  drain(timeoutMs: number): Promise<void>;
};

/**
 * The HTTP server around the app's listener, for its start and its stop.
 *
 * Starting: the port is bound before the app is (an ephemeral port is part of the public URL the
 * app is built with), and a request arriving in between waits for it instead of being refused:
 * a client or load balancer that connects the moment the port opens is simply answered a moment
 * later.
 *
 * Stopping (SIGTERM): the listening socket closes and idle keep-alive connections with it; every
 * answer from then on says `Connection: close`, so each connection closes after its request in
 * flight; a request that still arrives on a kept-alive connection is refused with 503 and
 * Retry-After (a load balancer or client sends it again elsewhere) instead of being started
 * with the database about to close under it. The database closes only after every handler has
 * answered, or past the deadline: a handler that has called Meta records what Meta answered.
 */
export function serverLifecycle(log: Logger): ServerLifecycle {
  let listener: Listener | undefined;
  let failed = false;
  let stopping = false;
  const waiting: [IncomingMessage, ServerResponse][] = [];
  const inFlight = responsesInFlight();
  let drained: (() => void) | undefined; // resolves drain's wait once nothing is in flight

  const serve = (req: IncomingMessage, res: ServerResponse, run: Listener) => {
    inFlight.add(res);
    // Each surface answers its own failures: settled either way, the request is over here.
    const done = () => {
      inFlight.delete(res);
      if (!stopping) return;
      // A response whose head left before the stop kept its connection open: closed now.
      server.closeIdleConnections();
      if (inFlight.size === 0) drained?.();
    };
    run(req, res).then(done, done);
  };
  const server = createServer((req, res) => {
    if (stopping) refuse(res, STOPPING);
    else if (listener) serve(req, res, listener);
    else if (failed) refuse(res, NOT_STARTED);
    else waiting.push([req, res]);
  });
  return {
    server,
    bind(l) {
      listener = l;
      for (const [req, res] of waiting.splice(0)) serve(req, res, l);
    },
    fail() {
      failed = true;
      for (const [, res] of waiting.splice(0)) refuse(res, NOT_STARTED);
    },
    async drain(timeoutMs) {
      stopping = true;
      for (const [, res] of waiting.splice(0)) refuse(res, STOPPING);
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const answered = new Promise<void>((resolve) => {
        drained = resolve;
        if (inFlight.size === 0) resolve();
      });
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'deadline'>((resolve) => {
        timer = setTimeout(() => resolve('deadline'), timeoutMs);
      });
      if ((await Promise.race([Promise.all([closed, answered]), deadline])) === 'deadline') {
        log.warn(
          { requests: inFlight.size, timeout_ms: timeoutMs },
          'shutdown timeout passed: cutting the requests still in flight',
        );
        server.closeAllConnections();
      }
      clearTimeout(timer);
      await closed;
    },
  };
}

/**
 * The responses in flight, for the stop. Not a Set: a Set that gains and loses one entry per
 * request kept the young generation's collections from freeing recent requests (measured under
 * load: 2.5–3 MB of young objects kept alive per collection and 5–10 ms pauses, against 0.1 MB
 * and ~1 ms with this; docs/performance.md, "What the garbage collector does with the service's
 * garbage"). The likely cause is V8's hash tables: each table a Set outgrows stays linked to the
 * next, so the tables a long-lived Set leaves behind in the old generation keep pointing at young
 * ones. Here an array, each response holding its place in it; a response leaves by the last one
 * taking its place.
 */
function responsesInFlight() {
  const list: Tracked[] = [];
  return {
    add(res: Tracked) {
      res[PLACE] = list.length;
      list.push(res);
    },
    delete(res: Tracked) {
      const at = res[PLACE];
      if (at === undefined) return;
      res[PLACE] = undefined;
      const last = list.pop() as Tracked;
      if (last === res) return;
      list[at] = last;
      last[PLACE] = at;
    },
    get size() {
      return list.length;
    },
    [Symbol.iterator]: () => list.values(),
  };
}

const PLACE = Symbol('place in flight');
type Tracked = ServerResponse & { [PLACE]?: number };

const STOPPING = 'The service is restarting; send the request again';
const NOT_STARTED = 'The service could not start; try again shortly';

/** 503 with Retry-After, in the error body every surface uses, on a connection that then closes. */
function refuse(res: ServerResponse, message: string) {
  const body = JSON.stringify({ error: 'service_unavailable', message, details: {} });
  res.shouldKeepAlive = false;
  res.writeHead(503, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'retry-after': '1',
    // Readable from a page too (the dashboard says what happened instead of a network error).
    'access-control-allow-origin': '*',
  });
  res.end(body);
}

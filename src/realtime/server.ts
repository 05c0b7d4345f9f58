import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { checkApiKey } from '../platform/http/authenticate.ts';
import { addressKey, clientIp, trustedProxies } from '../platform/http/client-ip.ts';
import type { Services } from '../services.ts';
import { type RealtimeLimits, serveConnection } from './connection.ts';
import { createHub } from './hub.ts';
import type { Vsn } from './protocol.ts';
import { realtimeTables } from './tables.ts';

export const REALTIME_PATH = '/realtime/v1/websocket';

/** A socket that sent nothing (realtime-js heartbeats every 25 s) for this long is closed. */
const IDLE_MS = 60_000;
/** How often every channel's access is checked again (what no notice announces: a plan's scopes). */
const RECHECK_MS = 60_000;
/** The largest frame a client may send; broadcasts are held lower (RealtimeLimits). */
const MAX_FRAME_BYTES = 64 * 1024;

/** An upgrade refused: the status line's reason and the body's `error`. */
const REFUSALS = {
  401: ['Unauthorized', 'unauthorized'],
  429: ['Too Many Requests', 'rate_limited'],
  503: ['Service Unavailable', 'service_unavailable'],
} as const;

/**
 * /realtime/v1/websocket: the websocket `@supabase/realtime-js` opens (docs/realtime.md). The
 * upgrade needs the anon (or service) key in `apikey`, as the gateway asks of every request;
 * each channel then joins with its own access token (connection.ts). Changes, membership ends
 * and broadcasts arrive by one LISTEN per process, held while it has a channel (hub.ts).
 */
export async function startRealtime(s: Services, limits: RealtimeLimits) {
  const tables = await realtimeTables(s.db);
  const hub = createHub({
    db: s.db,
    schema: s.schema,
    tables,
    log: s.log,
    lingerMs: s.config.realtime.listenLingerMs,
  });
  // The hub LISTENs while it has a channel; agent key revocations are heard by main.ts's
  // listener, which hands them to hub.onKeyRevoked.
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  const lastSeen = new Map<WebSocket, number>();
  const perAddress = new Map<string, number>();
  const proxies = trustedProxies(s.config.trustProxy);
  let stopping = false;
  const deps = { db: s.db, schema: s.schema, tables, tokens: s.tokens, meter: s, hub, log: s.log, limits };

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [ws, at] of lastSeen) if (now - at > IDLE_MS) ws.terminate();
    hub.recheckAll().catch(() => {});
  }, Math.min(IDLE_MS, RECHECK_MS) / 2);
  sweep.unref();

  /** The HTTP server's 'upgrade' event: true when the request was realtime's (answered here). */
  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== REALTIME_PATH) return false;
    const started = performance.now();
    const refuse = (status: keyof typeof REFUSALS, message: string) => {
      const [reason, error] = REFUSALS[status];
      const body = JSON.stringify({ error, message, details: {} });
      socket.end(
        `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      s.metrics.requests.observe(REALTIME_PATH, '', 'GET', status, started);
    };
    if (stopping) {
      refuse(503, 'The service is restarting; connect again');
      return true;
    }
    const address = addressKey(
      clientIp(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for']?.toString(), proxies),
    );
    if ((perAddress.get(address) ?? 0) >= limits.socketsPerAddress) {
      refuse(429, `At most ${limits.socketsPerAddress} open websockets from one address`);
      return true;
    }
    // Counted from now until the connection closes, however it ends (refused, failed, closed).
    perAddress.set(address, (perAddress.get(address) ?? 0) + 1);
    socket.once('close', () => {
      const n = (perAddress.get(address) ?? 1) - 1;
      if (n > 0) perAddress.set(address, n);
      else perAddress.delete(address);
    });
    const vsn: Vsn = url.searchParams.get('vsn') === '2.0.0' ? '2.0.0' : '1.0.0';
    checkApiKey(s.tokens, url.searchParams.get('apikey') ?? req.headers.apikey?.toString()).then(
      () =>
        wss.handleUpgrade(req, socket, head, (ws) => {
          s.metrics.requests.observe(REALTIME_PATH, '', 'GET', 101, started);
          lastSeen.set(ws, Date.now());
          ws.on('message', () => lastSeen.set(ws, Date.now()));
          ws.on('close', () => lastSeen.delete(ws));
          serveConnection(ws, vsn, deps);
        }),
      (err: Error) => refuse(401, err.message),
    );
    return true;
  }

  return {
    upgrade,
    hub,
    /** Refuses new sockets, closes the open ones (1001: the client reconnects, to another process), stops listening. */
    async close() {
      stopping = true;
      clearInterval(sweep);
      for (const ws of wss.clients) ws.close(1001, 'The service is restarting');
      const closed = [...wss.clients].map(
        (ws) =>
          new Promise<void>((resolve) =>
            ws.readyState === ws.CLOSED ? resolve() : ws.once('close', () => resolve()),
          ),
      );
      // A client that never answers the close is cut after a moment.
      const cut = setTimeout(() => {
        for (const ws of wss.clients) ws.terminate();
      }, 2_000);
      await Promise.all(closed);
      clearTimeout(cut);
      wss.close();
      await hub.close();
    },
  };
}

export type Realtime = Awaited<ReturnType<typeof startRealtime>>;

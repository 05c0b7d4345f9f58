// What this file protects (issue 26, section 3): SIGTERM while sends are held in Meta's hands.
// Every send already accepted is answered (201, its outcome recorded), each reached Meta once,
// its answer says `Connection: close`, and nothing was cut or answered after the database closed;
// a request that comes after the signal on a kept-alive connection is not started (503 with
// Retry-After, or the connection is closed before it is read). Before, busy keep-alive
// connections kept taking requests until the shutdown timeout, which then cut handlers that had
// called Meta without recording its answer: the worker sent those messages again.
// `svc start` in a child process, on the embedded database and on PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { exited, runCli, startCli } from '../helpers/cli.ts';
import { freshDatabase, onPostgres } from '../helpers/db.ts';
import { signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { connect } from '../helpers/send.ts';
import type { TestService } from '../helpers/service.ts';

const PHONE_ID = '106540352242922';
const WA_TOKEN = 'EAAG-graceful-stop';
const HELD_MS = 1500;
const SENDS = 6;

let graph: FakeGraph;
let env: Record<string, string>;
const cleanups: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  graph = await startFakeGraph({ accounts: { [PHONE_ID]: { token: WA_TOKEN, channel: 'whatsapp' } } });
  cleanups.push(() => graph.close());
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-stop-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  env = {
    DATA_DIR: dir,
    PORT: '0',
    LOG_LEVEL: 'info',
    META_GRAPH_URL: graph.url,
    // Well past the held sends: reaching it would cut them, which this test must never see.
    SHUTDOWN_TIMEOUT_MS: '30000',
  };
  if (onPostgres()) {
    const fresh = await freshDatabase();
    await fresh.db.close();
    cleanups.push(() => fresh.drop());
    env.DATABASE_URL = fresh.url as string;
  }
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** One HTTP/1.1 request written on a raw socket (several may follow each other on it). */
const requestText = (method: string, target: string, headers: Record<string, string>, body = '') =>
  `${method} ${target} HTTP/1.1\r\nHost: localhost\r\n${Object.entries({
    ...headers,
    'content-length': String(Buffer.byteLength(body)),
  })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n${body}`;

/** The status lines and headers of every response in what a socket received. */
function responsesIn(raw: string) {
  return [...raw.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n((?:[^\r]+\r\n)*)\r\n/g)].map((m) => ({
    status: Number(m[1]),
    headers: Object.fromEntries(
      (m[2] as string)
        .split('\r\n')
        .filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    ),
  }));
}

describe('SIGTERM with sends in flight', () => {
  it('answers every accepted send once, recorded, and starts nothing new', async () => {
    const { child, url, output } = await startCli(env);
    cleanups.push(() => child.kill('SIGKILL'));
    const keys = JSON.parse((await runCli(['keys'], { ...env, PUBLIC_URL: url })).stdout);
    const target = { url, anonKey: keys.anon_key, serviceRoleKey: keys.service_role_key } as TestService;
    const owner = await signUp(target, 'Graceful Stop Co');
    await setPlan(target, owner, 'starter');
    await connect(target, owner, 'whatsapp', PHONE_ID, WA_TOKEN);
    graph.reset(); // the connect's checks are not sends
    graph.setLatency(HELD_MS);

    // A kept-alive connection, idle when the signal comes: the stop closes it at once (left open,
    // it would hold the stop until the timeout, which cuts and says so).
    const { port } = new URL(url);
    const idle = tcpConnect(Number(port), '127.0.0.1');
    let idleReceived = '';
    idle.on('data', (d) => {
      idleReceived += d;
    });
    idle.on('error', () => {});
    const idleClosed = new Promise<void>((resolve) => idle.on('close', () => resolve()));
    idle.write(requestText('GET', '/health', {}));
    while (!idleReceived.includes('"ok"')) await new Promise((r) => setTimeout(r, 20));
    expect(responsesIn(idleReceived)[0]).toMatchObject({
      status: 200,
      headers: { connection: 'keep-alive' },
    });

    // Each send on a socket of its own, kept alive; the last one also carries a second request
    // right behind its send, written after the signal.
    const sockets = Array.from({ length: SENDS }, (_, i) => {
      const socket = tcpConnect(Number(port), '127.0.0.1');
      let received = '';
      socket.on('data', (d) => {
        received += d;
      });
      socket.on('error', () => {}); // a reset shows as a missing answer below
      const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
      const body = JSON.stringify({
        to: `+1415555${String(1000 + i)}`,
        template: { name: 'order_update', language: 'en_US' },
      });
      socket.write(
        requestText(
          'POST',
          '/functions/v1/whatsapp-send-message',
          {
            apikey: keys.anon_key,
            authorization: `Bearer ${owner.access_token}`,
            'content-type': 'application/json',
          },
          body,
        ),
      );
      return { socket, closed };
    });
    // Every send is inside Meta now (the fake holds each for HELD_MS).
    for (let i = 0; graph.requests.length < SENDS; i++) {
      if (i > 300) throw new Error(`only ${graph.requests.length} sends reached the fake`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const stopped = exited(child);
    child.kill('SIGTERM');
    // The signal has been taken once the port refuses new connections.
    for (let refused = false; !refused; ) {
      refused = await new Promise<boolean>((resolve) => {
        const probe = tcpConnect(Number(port), '127.0.0.1');
        probe.on('connect', () => {
          probe.destroy();
          resolve(false);
        });
        probe.on('error', () => resolve(true));
      });
    }
    const last = sockets[SENDS - 1] as (typeof sockets)[number];
    last.socket.write(
      requestText('GET', '/rest/v1/contacts?select=id', {
        apikey: keys.anon_key,
        authorization: `Bearer ${owner.access_token}`,
      }),
    );

    const answers = await Promise.all(sockets.map((s) => s.closed));
    await idleClosed;
    expect(responsesIn(idleReceived)).toHaveLength(1); // closed, nothing more said on it
    expect(await stopped).toBe(0);
    for (const [i, raw] of answers.entries()) {
      const [sent, after, ...more] = responsesIn(raw);
      expect(sent, `send ${i}: ${raw}`).toMatchObject({ status: 201, headers: { connection: 'close' } });
      expect(more).toEqual([]);
      // The request behind it was never started: refused, or never read.
      if (after) expect(after).toMatchObject({ status: 503, headers: { 'retry-after': expect.any(String) } });
    }
    // Each send reached Meta once.
    const tos = graph.sent().map((r) => (r.body as { to: string }).to);
    expect(tos).toHaveLength(SENDS);
    expect(new Set(tos).size).toBe(SENDS);
    // Nothing was cut, nothing failed, and the service stopped cleanly.
    const lines = output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; status?: number; path?: string });
    expect(lines.filter((l) => /shutdown timeout/.test(l.msg))).toEqual([]);
    expect(lines.filter((l) => l.msg === 'request' && (l.status ?? 0) >= 500)).toEqual([]);
    expect(lines.filter((l) => l.msg === 'stopped')).toHaveLength(1);

    // Every message is recorded as sent, with the id Meta gave it: no worker will send it again.
    const sql = `select status, count(*)::int as n from messages where direction = 'out' group by status`;
    const rows = onPostgres()
      ? await readPostgres(env.DATABASE_URL as string, sql)
      : await readPglite(env.DATA_DIR as string, sql);
    expect(rows).toEqual([{ status: 'sent', n: SENDS }]);
  });
});

async function readPostgres(url: string, sql: string) {
  const db = openPostgres(url, 1);
  try {
    return await db.query(sql);
  } finally {
    await db.close();
  }
}

async function readPglite(dataDir: string, sql: string) {
  const db = await openPglite(path.join(dataDir, 'pglite'));
  try {
    return await db.query(sql);
  } finally {
    await db.close();
  }
}

// The websocket below supabase-js (docs/realtime.md): Phoenix frames in both serializers, a
// heartbeat answered on topic `phoenix`, a join counted as one API call and heartbeats not, the
// upgrade in the request metrics under its route, and a stop that closes open sockets with 1001
// (the client reconnects elsewhere) instead of waiting on them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { apiCallsToday } from '../../src/platform/http/meter.ts';
import { orgOf, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../helpers/work-rows.ts';

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';
let svc: TestService;
let owner: Session;

beforeAll(async () => {
  svc = await startTestService({ METRICS_TOKEN });
  owner = await signUp(svc, 'Protocol Shop');
});
afterAll(async () => {
  await svc?.stop();
});

/** A raw websocket as realtime-js opens it; `next()` is the next frame, parsed. */
async function socket(target: TestService, vsn: '1.0.0' | '2.0.0') {
  const url = `${target.url.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${target.anonKey}&vsn=${vsn}`;
  const ws = new WebSocket(url);
  const frames: unknown[] = [];
  const waiting: ((f: unknown) => void)[] = [];
  ws.on('message', (data) => {
    const f = JSON.parse(String(data));
    const w = waiting.shift();
    if (w) w(f);
    else frames.push(f);
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return {
    ws,
    send: (f: unknown) => ws.send(JSON.stringify(f)),
    next: () =>
      new Promise<unknown>((resolve) => (frames.length ? resolve(frames.shift()) : waiting.push(resolve))),
  };
}

const callsToday = () => apiCallsToday(svc.services, orgOf(owner));

describe('frames', () => {
  it('a heartbeat is answered in 2.0.0 arrays and in 1.0.0 objects', async () => {
    const v2 = await socket(svc, '2.0.0');
    v2.send([null, '1', 'phoenix', 'heartbeat', {}]);
    expect(await v2.next()).toEqual([null, '1', 'phoenix', 'phx_reply', { status: 'ok', response: {} }]);
    v2.ws.close();
    const v1 = await socket(svc, '1.0.0');
    v1.send({ topic: 'phoenix', event: 'heartbeat', payload: {}, ref: '7' });
    expect(await v1.next()).toEqual({
      join_ref: null,
      ref: '7',
      topic: 'phoenix',
      event: 'phx_reply',
      payload: { status: 'ok', response: {} },
    });
    v1.ws.close();
  });

  it('a join counts as one API call; heartbeats and leaves do not', async () => {
    const s = await socket(svc, '2.0.0');
    const before = await callsToday();
    s.send(['1', '1', 'realtime:count', 'phx_join', { config: {}, access_token: owner.access_token }]);
    expect(await s.next()).toMatchObject(['1', '1', 'realtime:count', 'phx_reply', { status: 'ok' }]);
    for (let i = 2; i < 5; i++) {
      s.send([null, String(i), 'phoenix', 'heartbeat', {}]);
      await s.next();
    }
    s.send(['1', '5', 'realtime:count', 'phx_leave', {}]);
    expect(await s.next()).toMatchObject(['1', '5', 'realtime:count', 'phx_reply', { status: 'ok' }]);
    expect((await callsToday()) - before).toBe(1);
    s.ws.close();
  });

  it('the upgrade is measured under the route /realtime/v1/websocket', async () => {
    (await socket(svc, '2.0.0')).ws.close();
    const text = await (
      await fetch(`${svc.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    expect(text).toMatch(
      /svc_http_request_duration_seconds_count\{[^}]*route="\/realtime\/v1\/websocket"[^}]*status="101"/,
    );
  });
});

describe('limits', () => {
  it('one address may hold only so many open websockets; a closed one frees its place', async () => {
    const limited = await startTestService({ REALTIME_SOCKETS_PER_ADDRESS: '2' });
    try {
      const [a, b] = [await socket(limited, '2.0.0'), await socket(limited, '2.0.0')];
      const url = `${limited.url.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${limited.anonKey}&vsn=2.0.0`;
      const third = new WebSocket(url);
      third.on('error', () => {}); // the refusal, read below
      const refused = await new Promise<number | undefined>((resolve) => {
        third.on('unexpected-response', (_req, res) => resolve(res.statusCode));
        third.on('open', () => resolve(101));
      });
      expect(refused).toBe(429);
      const freed = new Promise((resolve) => a.ws.once('close', resolve));
      a.ws.close();
      await freed;
      // The server counts the place free once its side of the connection has closed too.
      await until(async () => {
        const s = await socket(limited, '2.0.0').catch(() => null);
        s?.ws.close();
        return s !== null;
      });
      b.ws.close();
    } finally {
      await limited.stop();
    }
  });
});

describe('stopping', () => {
  it('closes open websockets with 1001 and stops', async () => {
    const other = await startTestService();
    const s = await socket(other, '2.0.0');
    const closed = new Promise<number>((resolve) => s.ws.once('close', (code) => resolve(code)));
    await other.stop();
    expect(await closed).toBe(1001);
  });
});

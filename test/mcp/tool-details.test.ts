// Small protocol and tool details (issue 31, section 4): JSON-RPC batches only for the protocol
// versions that have them; the loopback names one origin for a loopback service; wrong enum and
// date values named with what is allowed; a reversed range refused; days in a time zone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dayStartIn } from '../../src/domain/calendar-days.ts';
import { signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, rpcPost, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let token: string;
beforeAll(async () => {
  svc = await startTestService();
  token = (await agentToken(svc, await signUp(svc, 'Details Shop'), ['read'])).token;
}, 60_000);
afterAll(() => svc?.stop());

const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('JSON-RPC batches', () => {
  it('are refused under protocol versions without them, and answered under 2025-03-26', async () => {
    for (const version of ['2025-06-18', '2025-11-25']) {
      const r = await rpcPost(svc, token, [ping(1), ping(2)], { 'mcp-protocol-version': version });
      expect(r.status).toBe(400);
      const body = await r.json();
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(body.error.message).toMatch(new RegExp(`${version}.*batches`));
    }
    const old = await rpcPost(svc, token, [ping(1), ping(2)], { 'mcp-protocol-version': '2025-03-26' });
    expect(old.status).toBe(200);
    expect((await old.json()).map((a: { id: number }) => a.id)).toEqual([1, 2]);
    // A lone message under the newest version is answered as always.
    expect((await rpcPost(svc, token, ping(3), { 'mcp-protocol-version': '2025-11-25' })).status).toBe(200);
  });
});

describe('origins of a loopback service', () => {
  it('takes localhost, 127.0.0.1 and [::1] on its own port as its own origin, and no other port', async () => {
    const port = new URL(svc.url).port;
    for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`]) {
      const r = await rpcPost(svc, token, ping(1), { origin });
      expect(r.status).toBe(200);
      expect(r.headers.get('access-control-allow-origin')).toBe(origin);
    }
    expect((await rpcPost(svc, token, ping(1), { origin: 'http://localhost:1' })).status).toBe(403);
  });
});

describe('wrong values are named with what is allowed', () => {
  it('an order status and a date', async () => {
    const client = await mcpClient(svc, token);
    const status = await tool(client, 'svc_list_orders', { status: ['nope'] });
    expect(status.body.details.issues).toEqual([
      { path: 'status', message: expect.stringMatching(/pending.*cancelled/) },
    ]);
    const date = await tool(client, 'svc_list_orders', { created_after: 'yesterday' });
    expect(date.body.details.issues).toEqual([
      { path: 'created_after', message: expect.stringMatching(/ISO 8601.*2026-11-27/) },
    ]);
    const reversed = await tool(client, 'svc_list_orders', {
      created_after: '2026-02-01',
      created_before: '2026-01-01',
    });
    expect(reversed.isError).toBe(true);
    expect(reversed.body.details.issues).toEqual([
      { path: 'created_before', message: expect.stringMatching(/created_after/) },
    ]);
    await client.close();
  });
});

describe('a day in a time zone', () => {
  it('starts at its own midnight, daylight saving included', () => {
    expect(dayStartIn('2026-11-27', 'Europe/Paris')).toBe('2026-11-26T23:00:00.000Z');
    expect(dayStartIn('2026-07-01', 'Europe/Paris')).toBe('2026-06-30T22:00:00.000Z');
    expect(dayStartIn('2026-03-08', 'America/New_York')).toBe('2026-03-08T05:00:00.000Z');
    expect(dayStartIn('2026-03-09', 'America/New_York')).toBe('2026-03-09T04:00:00.000Z');
    expect(dayStartIn('2026-11-27', 'UTC')).toBe('2026-11-27T00:00:00.000Z');
  });
});

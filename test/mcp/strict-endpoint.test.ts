// The MCP endpoint refuses what the Streamable HTTP specification and JSON-RPC say it must: pages
// of other origins, DNS-rebound Host names, arguments a tool does not take (all of them named at
// once), and malformed params (-32602, in a sentence).
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, mcpUrl, rpcPost, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const ALLOWED = 'https://console.example.test';
let svc: TestService;
let owner: Session;
let token: string;

beforeAll(async () => {
  svc = await startTestService({
    RATE_LIMIT_STANDARD_PER_MINUTE: '1000',
    MCP_ALLOWED_ORIGINS: `${ALLOWED}/, http://localhost:6274`,
  });
  owner = await signUp(svc, 'Strict Ltd');
  await setPlan(svc, owner, 'starter');
  ({ token } = await agentToken(svc, owner, ['write']));
});
afterAll(() => svc?.stop());

const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };
const post = (body: unknown, headers: Record<string, string> = {}) => rpcPost(svc, token, body, headers);

describe('Origin and Host', () => {
  it('refuses a page of another origin with 403, and CORS does not let its browser read anything', async () => {
    const res = await post(PING, { origin: 'http://evil.example.com' });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      error: 'forbidden',
      message: expect.stringMatching(/MCP_ALLOWED_ORIGINS/),
      details: { origin: 'http://evil.example.com' },
    });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await fetch(mcpUrl(svc), {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example.com', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    // Other APIs still answer any page (they take bearer tokens only).
    const rest = await fetch(`${svc.url}/rest/v1/`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example.com', 'access-control-request-method': 'GET' },
    });
    expect(rest.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('serves the service’s own origin and those in MCP_ALLOWED_ORIGINS, naming them in CORS', async () => {
    for (const origin of [new URL(svc.url).origin, ALLOWED, 'http://localhost:6274']) {
      const res = await post(PING, { origin });
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect((await res.json()).result).toEqual({});
    }
  });

  it('serves agents, which send no Origin, as before', async () => {
    const client = await mcpClient(svc, token);
    await client.ping();
    await client.close();
  });

  it('refuses a Host that is not a loopback name while it listens on loopback (DNS rebinding)', async () => {
    const send = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { port } = new URL(svc.url);
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/functions/v1/mcp-server',
            method: 'POST',
            headers: {
              host,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              authorization: `Bearer ${token}`,
            },
          },
          (res) => {
            let body = '';
            res.on('data', (d) => {
              body += d;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(PING));
      });
    const rebound = await send(`attacker.example.com:${new URL(svc.url).port}`);
    expect(rebound.status).toBe(403);
    expect(JSON.parse(rebound.body)).toMatchObject({
      error: 'forbidden',
      message: expect.stringMatching(/loopback/),
    });
    // A proxy forwarding a configured public name (here a host of MCP_ALLOWED_ORIGINS) gets through.
    for (const host of [
      'localhost',
      `127.0.0.1:${new URL(svc.url).port}`,
      '[::1]:80',
      new URL(ALLOWED).host,
    ]) {
      expect((await send(host)).status, host).toBe(200);
    }
  });

  it('reads MCP_ALLOWED_ORIGINS as origins and refuses anything else at start', () => {
    expect(
      loadConfig({ MCP_ALLOWED_ORIGINS: 'https://A.example.com/, http://localhost:3000' }).mcpAllowedOrigins,
    ).toEqual(['https://a.example.com', 'http://localhost:3000']);
    expect(loadConfig({}).mcpAllowedOrigins).toEqual([]);
    for (const bad of ['example.com', 'https://example.com/app', 'ftp://example.com', '*']) {
      expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: bad }), bad).toThrow(ConfigError);
    }
  });
});

describe('tool arguments', () => {
  it('refuses an argument the tool does not take, naming it and the ones it takes', async () => {
    const client = await mcpClient(svc, token);
    const r = await tool(client, 'svc_list_contacts', { bogus: 1, tag: 'vip' });
    expect(r).toMatchObject({ isError: true, body: { error: 'validation_error' } });
    expect(r.body.details.issues).toEqual([
      {
        path: 'bogus',
        message: expect.stringMatching(/Unknown argument.*name, email, phone, tag, limit, cursor/),
      },
    ]);
    const line = await tool(client, 'svc_create_order', {
      address: '1 Main St',
      phone_number: '+14155550123',
      items: [{ name: 'Mug', quantity: 1, price: 3 }],
    });
    expect(line.body.details.issues).toEqual([
      { path: 'items.0.price', message: expect.stringMatching(/Unknown argument/) },
    ]);
    await client.close();
  });

  it('reports every invalid argument in one answer, the domain’s phone rule included', async () => {
    const client = await mcpClient(svc, token);
    // An international number is checked with the other arguments; a national one is read by the
    // domain with the organization's country (src/domain/phone.ts).
    const r = await tool(client, 'svc_create_contact', { email: 'nope', phone: '+12345' });
    expect(r.body.error).toBe('validation_error');
    expect(r.body.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(['email', 'phone']);
    expect(r.body.details.issues.find((i: { path: string }) => i.path === 'phone').message).toMatch(
      /country code/,
    );
    const order = await tool(client, 'svc_create_order', {
      address: '1 Main St',
      phone_number: '+555',
      customer_phone: 'call me',
      customer_email: 'x@',
      items: [{ name: 'Mug', quantity: 0 }],
    });
    expect(order.body.details.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'customer_email',
      'customer_phone',
      'items.0.quantity',
      'phone_number',
    ]);
    // A valid phone still goes through the domain's normalization.
    const ok = await tool(client, 'svc_create_contact', { first_name: 'Ok', phone: '0044 20 7946 0001' });
    expect(ok.body.contact.phone).toBe('+442079460001');
    await client.close();
  });
});

describe('JSON-RPC errors', () => {
  it('answers initialize without params with -32602 and a short message', async () => {
    const res = await post({ jsonrpc: '2.0', id: 7, method: 'initialize' });
    const body = await res.json();
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toMatch(/^Invalid params for initialize: /);
    expect(body.error.message.length).toBeLessThan(200);
    const call = await (await post({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: {} })).json();
    expect(call.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^Invalid params for tools\/call: params.name: /),
    });
  });

  it('names an unknown tool or resource once, without a doubled "MCP error" prefix', async () => {
    const raw = await (
      await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'svc_nope', arguments: {} } })
    ).json();
    expect(raw.error).toEqual({ code: -32602, message: 'Unknown tool: svc_nope' });
    const client = await mcpClient(svc, token);
    await expect(client.callTool({ name: 'svc_nope', arguments: {} })).rejects.toThrow(
      /^MCP error -32602: Unknown tool: svc_nope$/,
    );
    await expect(client.readResource({ uri: 'svc://schema/nope' })).rejects.toThrow(
      /^MCP error -32002: Resource not found: svc:\/\/schema\/nope$/,
    );
    await client.close();
  });
});

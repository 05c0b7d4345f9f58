// The MCP conformance suite's server scenarios against the service (issue 31, section 3). Not run
// by default: the suite is an npm package the project does not depend on. To run it:
//   npm install --prefix /tmp/conformance @modelcontextprotocol/conformance
//   MCP_CONFORMANCE=/tmp/conformance/node_modules/.bin/conformance npx vitest run test/mcp/conformance.test.ts
// The suite sends no credentials, so a small proxy adds an agent JWT to every request (the
// authorization scenarios are client scenarios: they test MCP clients, not servers). Which
// scenarios pass and why the others do not apply: docs/mcp-oauth.md.
import { execFile } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../helpers/http.ts';
import { agentToken } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const CLI = process.env.MCP_CONFORMANCE;

/** Scenarios for what this server offers (tools, resources, ping, DNS rebinding protection). */
const EXPECTED_TO_PASS = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'dns-rebinding-protection',
];

let svc: TestService;
let proxyUrl: string;
let closeProxy: () => void;

beforeAll(async () => {
  if (!CLI) return;
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  const { token } = await agentToken(svc, await signUp(svc, 'Conformance Shop'), ['read']);
  const target = new URL(svc.url);
  // The scenarios name the address they were given (the proxy's) in Host and Origin: the
  // service's own port stands in for it, as if the suite had reached the service directly.
  const own = (v: string | undefined) => v?.replace(`:${proxyPort()}`, `:${target.port}`);
  const proxy = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    if (headers.host) headers.host = own(headers.host);
    if (headers.origin) headers.origin = own(headers.origin);
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  const proxyPort = () => (proxy.address() as AddressInfo).port;
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  closeProxy = () => proxy.close();
}, 60_000);
afterAll(async () => {
  closeProxy?.();
  await svc?.stop();
});

const run = (scenario: string) =>
  new Promise<{ ok: boolean; out: string }>((resolve) =>
    execFile(
      CLI as string,
      ['server', '--url', `${proxyUrl}/mcp`, '--scenario', scenario],
      { timeout: 60_000 },
      (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${stderr}` }),
    ),
  );

describe.skipIf(!CLI)('MCP conformance suite, server scenarios', () => {
  it.each(EXPECTED_TO_PASS)('%s passes', async (scenario) => {
    const { ok, out } = await run(scenario);
    expect(ok, out).toBe(true);
  });
});

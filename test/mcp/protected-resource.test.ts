// The MCP endpoint as an OAuth protected resource (issue 31, section 1): a client given only the
// URL (`{base_url}/mcp` or the spec's path) learns from a 401 where to sign in; a token issued for
// another resource is refused; an OAuth client's token without a tool's scope gets 403 with the
// scope to ask for; agent-auth's tokens work at both paths as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp } from '../helpers/http.ts';
import { agentToken, mcpClient } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
}, 60_000);
afterAll(() => svc?.stop());

const PATHS = ['/functions/v1/mcp-server', '/mcp'];

const post = (
  path: string,
  token?: string,
  body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' },
) =>
  fetch(`${svc.url}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });

/** The parameters of a `Bearer k="v", …` challenge. */
const challenge = (header: string | null) =>
  Object.fromEntries([...(header ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;

describe.each(PATHS)('at %s', (path) => {
  it('publishes its resource metadata (RFC 9728)', async () => {
    const r = await fetch(`${svc.url}/.well-known/oauth-protected-resource${path}`);
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({
      resource: `${svc.url}${path}`,
      authorization_servers: [svc.url],
      scopes_supported: ['read', 'write', 'admin'],
      bearer_methods_supported: ['header'],
    });
  });

  it('answers a request without a token with a challenge naming the metadata and agent-auth', async () => {
    const r = await post(path);
    expect(r.status).toBe(401);
    const c = challenge(r.headers.get('www-authenticate'));
    expect(c.resource_metadata).toBe(`${svc.url}/.well-known/oauth-protected-resource${path}`);
    expect(c.error).toBeUndefined();
    expect(c.error_description).toMatch(/agent-auth/);
  });

  it('keeps the raw-key hint beside the metadata', async () => {
    const r = await post(path, `svc_ak_${'a'.repeat(48)}`);
    expect(r.status).toBe(401);
    const c = challenge(r.headers.get('www-authenticate'));
    expect(c).toMatchObject({ error: 'invalid_token', resource_metadata: expect.stringContaining(path) });
    expect(c.error_description).toMatch(/raw API key.*agent-auth/);
    expect((await r.json()).details.auth_endpoint).toBe(`${svc.url}/functions/v1/agent-auth`);
  });

  it('serves an agent-auth token as before, through the SDK client', async () => {
    const session = await signUp(svc, 'Shop');
    const { token } = await agentToken(svc, session, ['read']);
    const client = await mcpClientAt(path, token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('svc_list_contacts');
    await client.close();
  });
});

async function mcpClientAt(path: string, token: string) {
  if (path === '/functions/v1/mcp-server') return mcpClient(svc, token);
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import(
    '@modelcontextprotocol/sdk/client/streamableHttp.js'
  );
  const client = new Client({ name: 'svc-tests', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${svc.url}${path}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe('tokens and their audience (RFC 8707)', () => {
  /** An agent JWT for the key behind `token`, re-signed with other claims (as an OAuth grant's). */
  const resign = async (token: string, claims: Record<string, unknown>) => {
    const { iat: _i, exp: _e, ...base } = claimsOf(token);
    return svc.services.tokens.sign({ ...base, ...claims }, 600);
  };

  it('refuses a token issued for another resource, and takes one for this endpoint at either path', async () => {
    const session = await signUp(svc, 'Shop');
    const { token } = await agentToken(svc, session, ['read']);
    const elsewhere = await resign(token, { aud: 'https://other.example/mcp', client_id: 'c' });
    const r = await post('/mcp', elsewhere);
    expect(r.status).toBe(401);
    expect(challenge(r.headers.get('www-authenticate')).error_description).toMatch(/another resource/);
    const here = await resign(token, { aud: `${svc.url}/mcp`, client_id: 'c' });
    for (const path of PATHS) expect((await post(path, here)).status).toBe(200);
  });

  it('answers an OAuth client missing a tool’s scope with 403 insufficient_scope and the scope', async () => {
    const session = await signUp(svc, 'Shop');
    const { token } = await agentToken(svc, session, ['read']);
    const oauth = await resign(token, { aud: `${svc.url}/mcp`, client_id: 'c' });
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'svc_create_contact', arguments: { name: 'Ada' } },
    };
    const r = await post('/mcp', oauth, call);
    expect(r.status).toBe(403);
    expect(challenge(r.headers.get('www-authenticate'))).toMatchObject({
      error: 'insufficient_scope',
      scope: 'read write',
      resource_metadata: `${svc.url}/.well-known/oauth-protected-resource/mcp`,
    });
    expect((await r.json()).error).toBe('insufficient_scope');
    // A key's token is told inside the tool result, as before: its remedy is another key.
    const byKey = await post('/mcp', token, call);
    expect(byKey.status).toBe(200);
    expect(JSON.stringify(await byKey.json())).toMatch(/insufficient_scope/);
  });
});

import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, mcpUrl, rpcPost, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let agent: { token: string; apiKey: string; keyPrefix: string };

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '1000' });
  owner = await signUp(svc, 'Protocol Ltd');
  await setPlan(svc, owner, 'starter');
  agent = await agentToken(svc, owner, ['write']);
});
afterAll(() => svc?.stop());

const rpc = (body: unknown, headers: Record<string, string> = {}) => rpcPost(svc, agent.token, body, headers);

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

describe('the MCP endpoint', () => {
  it('answers initialize 2025-03-26 with that version, in JSON, without a session', async () => {
    const res = await rpc(initialize('2025-03-26'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = await res.json();
    expect(body.result.protocolVersion).toBe('2025-03-26');
    expect(body.result.serverInfo.name).toBe('svc');
    expect(body.result.capabilities).toMatchObject({ tools: {}, resources: {} });
  });

  it('negotiates newer protocol versions as the SDK does, and an unknown one down to the latest', async () => {
    const newer = await (await rpc(initialize('2025-06-18'))).json();
    expect(newer.result.protocolVersion).toBe('2025-06-18');
    const unknown = await (await rpc(initialize('1999-01-01'))).json();
    expect(unknown.result.protocolVersion).toMatch(/^20\d\d-\d\d-\d\d$/);
    expect(unknown.result.protocolVersion).not.toBe('1999-01-01');
  });

  it('works with the SDK client: ping, tools, resources and templates', async () => {
    const client = await mcpClient(svc, agent.token);
    await client.ping();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'svc_list_contacts',
      'svc_get_contact',
      'svc_create_contact',
      'svc_update_contact',
      'svc_list_orders',
      'svc_get_order',
      'svc_create_order',
      'svc_update_order_status',
      'svc_list_inventory',
      'svc_check_stock',
      'svc_list_conversations',
      'svc_send_message',
      'svc_search',
      'svc_list_social_posts',
      'svc_get_social_post',
      'svc_create_social_post',
      'svc_update_social_post',
      'svc_delete_social_post',
      'svc_list_social_accounts',
      'svc_get_social_analytics',
      'svc_get_content_calendar',
    ]);
    for (const t of tools) {
      // What it is for, when to use it, what it returns: in a sentence or two.
      expect(t.description?.length).toBeGreaterThan(80);
      expect(t.description).toMatch(/Returns /);
      // Result shapes are in svc://schema/*, not repeated in every turn's tool list.
      expect(t.outputSchema).toBeUndefined();
      // Read tools say so; write tools say they destroy nothing and whether a repeat is harmless.
      if (t.annotations?.readOnlyHint !== true) {
        expect(t.annotations).toMatchObject({
          destructiveHint: t.name === 'svc_delete_social_post',
          idempotentHint: expect.any(Boolean),
        });
      }
    }
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      'svc://organization/info',
      'svc://schema/contacts',
      'svc://schema/orders',
      'svc://schema/inventory',
      'svc://schema/social',
    ]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    await client.close();
  });

  it('is described in the service’s OpenAPI document', async () => {
    const doc = await (await fetch(`${svc.url}/openapi.json`)).json();
    expect(doc.paths['/functions/v1/mcp-server'].post.summary).toMatch(/MCP/);
  });

  it('answers GET and DELETE with 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(mcpUrl(svc), { method, headers: { authorization: `Bearer ${agent.token}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect((await res.json()).error).toBe('method_not_allowed');
    }
  });

  it('turns a body that is not JSON into a JSON-RPC parse error', async () => {
    const res = await rpc('{"jsonrpc": "2.0", "id": 1,');
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe(-32700);
  });

  it('makes an unknown tool and an unknown resource protocol errors', async () => {
    const client = await mcpClient(svc, agent.token);
    await expect(client.callTool({ name: 'svc_drop_tables', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await expect(client.readResource({ uri: 'svc://schema/secrets' })).rejects.toThrow(/Resource not found/);
    await client.close();
  });

  it('answers invalid arguments with a validation_error body the model can act on', async () => {
    const client = await mcpClient(svc, agent.token);
    const r = await tool(client, 'svc_list_contacts', { limit: 500 });
    expect(r.isError).toBe(true);
    expect(r.body.error).toBe('validation_error');
    expect(r.body.details.issues[0].path).toBe('limit');
    await client.close();
  });
});

describe('who may call it', () => {
  const expectInvalidToken = async (res: Response, error: string, message?: RegExp) => {
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
    const body = await res.json();
    expect(body).toMatchObject({ error, message: expect.any(String), details: expect.any(Object) });
    if (message) expect(body.message).toMatch(message);
    return body;
  };

  it('refuses a request without a token, or with a bad one', async () => {
    // No credentials: RFC 6750 section 3.1 gives no error code, only where to sign in.
    const none = await rpc(initialize('2025-03-26'), { authorization: '' });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+"/);
    expect(none.headers.get('www-authenticate')).not.toMatch(/error=/);
    await expectInvalidToken(
      await rpc(initialize('2025-03-26'), { authorization: 'Bearer not.a.jwt' }),
      'unauthorized',
    );
    const tampered = `${agent.token.slice(0, -4)}AAAA`;
    await expectInvalidToken(
      await rpc(initialize('2025-03-26'), { authorization: `Bearer ${tampered}` }),
      'unauthorized',
    );
  });

  it('tells an agent that sends its raw API key to exchange it at agent-auth', async () => {
    const body = await expectInvalidToken(
      await rpc(initialize('2025-03-26'), { authorization: `Bearer ${agent.apiKey}` }),
      'unauthorized',
      /agent-auth/,
    );
    expect(body.details.auth_endpoint).toMatch(/\/functions\/v1\/agent-auth$/);
    expect(JSON.stringify(body)).not.toContain(agent.apiKey);
  });

  it('says token_expired for an expired agent token', async () => {
    const claims = decodeJwt(agent.token);
    const expired = await svc.services.tokens.sign({ ...claims, exp: undefined, iat: undefined }, -10);
    await expectInvalidToken(
      await rpc(initialize('2025-03-26'), { authorization: `Bearer ${expired}` }),
      'token_expired',
      /agent-auth/,
    );
  });

  it('refuses people (403) and the anon key (401)', async () => {
    const human = await rpc(initialize('2025-03-26'), { authorization: `Bearer ${owner.access_token}` });
    expect(human.status).toBe(403);
    expect((await human.json()).error).toBe('forbidden');
    await expectInvalidToken(
      await rpc(initialize('2025-03-26'), { authorization: `Bearer ${svc.anonKey}` }),
      'unauthorized',
    );
  });

  it('refuses a live token whose key was revoked', async () => {
    const doomed = await agentToken(svc, owner, ['read']);
    const revoke = await call(svc, 'PATCH', `/rest/v1/agent_api_keys?key_prefix=eq.${doomed.keyPrefix}`, {
      token: owner.access_token,
      body: { is_active: false },
    });
    expect(revoke.status).toBe(204);
    await expectInvalidToken(
      await rpc(initialize('2025-03-26'), { authorization: `Bearer ${doomed.token}` }),
      'unauthorized',
      /revoked/,
    );
  });
});

describe('limits on MCP calls', () => {
  it('counts every JSON-RPC call against the per-minute limit and the plan’s daily quota', async () => {
    // A fixed clock: the quota counts per UTC day, and a run across midnight would start afresh.
    const noon = new Date('2026-06-15T12:00:00Z');
    const small = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '4' }, { now: () => noon });
    try {
      const me = await signUp(small, 'Metered Ltd');
      await setPlan(small, me, 'starter');
      const { token } = await agentToken(small, me, ['read']);
      const other = await agentToken(small, me, ['read']); // its own per-minute budget
      const list = (id: number) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'svc_list_contacts', arguments: {} },
      });
      const post = (body: unknown) => rpcPost(small, token, body);
      expect((await post(list(1))).status).toBe(200);
      // A batch of three is three calls (2025-03-26 allows batches): 4 of 4 used.
      expect((await post([list(2), list(3), list(4)])).status).toBeLessThan(300);
      const over = await post(list(5));
      expect(over.status).toBe(429);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await over.json()).error).toBe('rate_limit_exceeded');

      await small.services.db.query("update plans set api_calls_per_day = 2 where slug = 'starter'");
      small.services.plans.forget(orgOf(me));
      const quota = await rpcPost(small, other.token, list(6));
      expect(quota.status).toBe(429);
      expect((await quota.json()).error).toBe('quota_exceeded');
    } finally {
      await small.stop();
    }
  });
});

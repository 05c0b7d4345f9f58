// Refusals a newcomer meets first, found by an outside probe with the official clients: each must
// say what happened and what to do next, with a status and code the clients understand.
import { AuthClient } from '@supabase/auth-js';
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Guided Ltd');
});
afterAll(() => svc?.stop());

const rest = (token?: string) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
  });

describe('a raw agent API key sent as a bearer token', () => {
  it('is told to exchange it at agent-auth on /rest/v1 and on functions, as on the MCP endpoint', async () => {
    const { apiKey } = await agentToken(svc, owner, ['read']);
    const endpoint = `${svc.url}/functions/v1/agent-auth`;
    for (const path of ['/rest/v1/contacts', '/functions/v1/agent-usage', '/functions/v1/mcp-server']) {
      const r = await call(svc, path.endsWith('mcp-server') ? 'POST' : 'GET', path, {
        token: apiKey,
        body: path.endsWith('mcp-server') ? { jsonrpc: '2.0', id: 1, method: 'ping' } : undefined,
        headers: { accept: 'application/json, text/event-stream' },
      });
      expect(r.status, path).toBe(401);
      expect(r.json.error, path).toBe('unauthorized');
      expect(r.json.message, path).toMatch(/exchange it for an agent JWT at agent-auth/);
      expect(r.json.details.auth_endpoint, path).toBe(endpoint);
      const challenge = r.headers.get('www-authenticate') ?? '';
      expect(challenge, path).toMatch(/^Bearer .*error="invalid_token", error_description="[^"]*agent-auth/);
      expect(challenge, path).toContain(endpoint);
      expect(JSON.stringify(r.json), path).not.toContain(apiKey);
    }
    const viaClient = await rest(apiKey).from('contacts').select('*');
    expect(viaClient.status).toBe(401);
    expect(viaClient.error?.message).toMatch(/agent-auth/);
  });
});

describe('GET /auth/v1/user with an agent JWT', () => {
  it('says that agents are not users, with a GoTrue status and code auth-js reads', async () => {
    const { token } = await agentToken(svc, await signUp(svc, 'Agent Owner Ltd'), ['read']);
    const auth = new AuthClient({
      url: `${svc.url}/auth/v1`,
      headers: { apikey: svc.anonKey },
      persistSession: false,
      autoRefreshToken: false,
    });
    const { data, error } = await auth.getUser(token);
    expect(data.user).toBeNull();
    expect(error?.status).toBe(403);
    expect(error?.code).toBe('bad_jwt');
    expect(error?.message).toMatch(/AI agent/);
    expect(error?.message).toMatch(/not a user/);
    expect(error?.message).not.toMatch(/missing sub claim/);
  });
});

describe('an anonymous read of a tenant table', () => {
  it('answers 401 with a code that says to sign in, keeping PostgREST’s 42501', async () => {
    const r = await call(svc, 'GET', '/rest/v1/contacts');
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ error: 'unauthorized', code: '42501' });
    expect(r.json.message).toMatch(/sign in/i);
    expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const viaClient = await rest().from('orders').select('*');
    expect(viaClient.status).toBe(401);
    expect(viaClient.error?.code).toBe('42501');
  });
});

describe('a person who belongs to no organization', () => {
  it('is told to create one or accept an invitation, on /rest/v1 and on functions that act in one', async () => {
    const homeless = await signUp(svc);
    const expectNoOrganization = (r: { status: number; json: Record<string, unknown> }, what: string) => {
      expect(r.status, what).toBe(403);
      expect(r.json.error, what).toBe('no_organization');
      expect(r.json.message, what).toMatch(/organization-create/);
      expect(r.json.message, what).toMatch(/invitation/);
    };
    const read = await rest(homeless.access_token).from('contacts').select('*');
    expect(read.status).toBe(403);
    expect(read.error?.code).toBe('no_organization');
    expect(read.error?.message).toMatch(/organization-create/);
    const write = await rest(homeless.access_token).from('contacts').insert({ first_name: 'x' });
    expect(write.status).toBe(403);
    expect(write.error?.code).toBe('no_organization');
    for (const [method, name, body] of [
      ['GET', 'agent-api-keys', undefined],
      ['POST', 'agent-api-key-create', { name: 'k', scopes: ['read'] }],
      ['GET', 'agent-usage', undefined],
      ['GET', 'organization-members', undefined],
    ] as const) {
      expectNoOrganization(
        await call(svc, method, `/functions/v1/${name}`, { token: homeless.access_token, body }),
        name,
      );
    }
    // What needs no organization still works: plans, own memberships, creating one and switching.
    expect((await rest(homeless.access_token).from('plans').select('slug')).data?.length).toBe(4);
    expect((await rest(homeless.access_token).from('organization_members').select('*')).data).toEqual([]);
    const created = await call(svc, 'POST', '/functions/v1/organization-create', {
      token: homeless.access_token,
      body: { name: 'Found Home Ltd' },
    });
    expect(created.status).toBe(201);
    const switched = await call(svc, 'POST', '/functions/v1/organization-switch', {
      token: homeless.access_token,
      body: { organization_id: created.json.organization.id },
    });
    expect(switched.status).toBe(200);
    expect((await rest(switched.json.access_token).from('contacts').select('*')).data).toEqual([]);
  });
});

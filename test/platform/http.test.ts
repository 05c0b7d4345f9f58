import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, signUp } from '../helpers/http.ts';
import { startTestService, type TestService, uniqueEmail } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.stop());

describe('platform behaviour', () => {
  it('answers /health when the database answers', async () => {
    const r = await call(svc, 'GET', '/health');
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('ok');
  });

  it('gives every response a request id, keeps a well-formed incoming one, and logs it', async () => {
    const fresh = await call(svc, 'GET', '/health');
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const traced = await call(svc, 'GET', '/health', { headers: { 'x-request-id': 'trace-abc-12345' } });
    expect(traced.headers.get('x-request-id')).toBe('trace-abc-12345');
    const line = svc.logLines().find((l) => l.req_id === 'trace-abc-12345');
    expect(line).toMatchObject({ method: 'GET', path: '/health', status: 200 });
    const forged = await call(svc, 'GET', '/health', { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(forged.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers an unknown route with 404 and the error body', async () => {
    const r = await call(svc, 'GET', '/no/such/route');
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: 'not_found', message: expect.any(String), details: {} });
  });

  it('refuses a body over 1 MiB with 413 and creates nothing', async () => {
    const email = uniqueEmail();
    const r = await call(svc, 'POST', '/auth/v1/signup', {
      body: { email, password: 'password-8', data: { blob: 'x'.repeat(1024 * 1024) } },
    });
    expect(r.status).toBe(413);
    expect(r.json.error).toBe('payload_too_large');
    const login = await call(svc, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email, password: 'password-8' },
    });
    expect(login.status).toBe(400);
  });

  it('refuses malformed JSON with 400 validation_error and issues', async () => {
    const res = await fetch(`${svc.url}/auth/v1/signup`, {
      method: 'POST',
      headers: { apikey: svc.anonKey, 'content-type': 'application/json' },
      body: '{"email": "a@b.c",',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; details: { issues: unknown[] } };
    expect(body.error).toBe('validation_error');
    expect(body.details.issues.length).toBeGreaterThan(0);
  });

  it('explains invalid fields in details.issues without leaking internals', async () => {
    const r = await call(svc, 'POST', '/auth/v1/signup', { body: { email: 'not-an-email', password: 12 } });
    expect(r.status).toBe(400);
    const paths = r.json.details.issues.map((i: { path: string }) => i.path).sort();
    expect(paths).toEqual(['email', 'password']);
    expect(JSON.stringify(r.json)).not.toMatch(/stack|at .*\.ts|select |insert /i);
  });

  it('requires the apikey header on /auth/v1, and only this service’s anon or service key', async () => {
    const none = await fetch(`${svc.url}/auth/v1/settings`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: string }).error).toBe('unauthorized');
    const session = await signUp(svc);
    const userTokenAsKey = await call(svc, 'GET', '/auth/v1/settings', {
      headers: { apikey: session.access_token },
    });
    expect(userTokenAsKey.status).toBe(401);
    const garbage = await call(svc, 'GET', '/auth/v1/settings', { headers: { apikey: 'garbage' } });
    expect(garbage.status).toBe(401);
    const ok = await call(svc, 'GET', '/auth/v1/settings');
    expect(ok.status).toBe(200);
    expect(ok.json.external.email).toBe(true);
    expect(ok.headers.get('x-supabase-api-version')).toBe('2024-01-01');
  });

  it('answers CORS preflights with the headers browsers and Supabase clients need', async () => {
    const res = await fetch(`${svc.url}/auth/v1/token?grant_type=password`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'apikey,authorization,content-type,x-client-info',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toMatch(/apikey/);
    const exposed = (
      await call(svc, 'GET', '/health', { headers: { origin: 'https://app.example' } })
    ).headers.get('access-control-expose-headers');
    expect(exposed).toMatch(/Content-Range/);
    expect(exposed).toMatch(/X-Supabase-Api-Version/);
  });

  it('serves an OpenAPI document describing the routes', async () => {
    const r = await call(svc, 'GET', '/openapi.json');
    expect(r.status).toBe(200);
    expect(r.json.openapi).toMatch(/^3\./);
    expect(Object.keys(r.json.paths)).toEqual(
      expect.arrayContaining(['/auth/v1/token', '/auth/v1/signup', '/functions/v1/organization-members']),
    );
  });

  it('declares its security schemes, and every operation has a unique operationId and its security', async () => {
    const { json: doc } = await call(svc, 'GET', '/openapi.json');
    expect(doc.components.securitySchemes).toEqual({
      apikey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'apikey' }),
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
    });
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { operationId?: string; security?: unknown[] }>).map(
        ([method, op]) => ({ at: `${method} ${path}`, ...op }),
      ),
    );
    expect(operations.length).toBeGreaterThan(15);
    for (const op of operations) {
      expect(op.operationId, op.at).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(Array.isArray(op.security), op.at).toBe(true);
      for (const requirement of op.security as Record<string, unknown>[]) {
        for (const scheme of Object.keys(requirement))
          expect(doc.components.securitySchemes, op.at).toHaveProperty(scheme);
      }
    }
    expect(new Set(operations.map((o) => o.operationId)).size).toBe(operations.length);
    const byPath = (at: string) => operations.find((o) => o.at === at);
    expect(byPath('post /functions/v1/agent-auth')).toMatchObject({
      operationId: 'postFunctionsAgentAuth',
      security: [],
    });
    expect(byPath('get /auth/v1/user')?.security).toEqual([{ apikey: [], bearer: [] }]);
    expect(byPath('post /functions/v1/agent-api-key-create')?.security).toEqual([{ bearer: [] }]);
    // The recovery link is opened by a browser from a mail: no apikey, no bearer.
    expect(byPath('get /auth/v1/verify')?.security).toEqual([]);
    expect(byPath('post /auth/v1/verify')?.security).toEqual([{ apikey: [] }]);
    // MCP sign-in: the client's calls are public, the consent page's carry the person's token.
    expect(byPath('post /oauth/token')).toMatchObject({ operationId: 'postOauthToken', security: [] });
    expect(byPath('get /oauth/authorize')?.security).toEqual([]);
    expect(byPath('post /oauth/register')?.security).toEqual([]);
    expect(byPath('post /oauth/revoke')?.security).toEqual([]);
    expect(byPath('post /oauth/authorize/decision')?.security).toEqual([{ bearer: [] }]);
    expect(byPath('get /.well-known/oauth-authorization-server')?.security).toEqual([]);
  });

  it('never writes passwords or tokens to the log', async () => {
    const password = 'very-secret-password-42';
    const email = uniqueEmail();
    const up = await call(svc, 'POST', '/auth/v1/signup', { body: { email, password } });
    await call(svc, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email, password: 'wrong-guess-1234' },
    });
    const refreshed = await call(svc, 'POST', '/auth/v1/token?grant_type=refresh_token', {
      body: { refresh_token: up.json.refresh_token },
    });
    const logs = svc.logs();
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [
      password,
      'wrong-guess-1234',
      up.json.access_token,
      up.json.refresh_token,
      refreshed.json.refresh_token,
      svc.anonKey,
    ]) {
      expect(logs).not.toContain(secret);
    }
  });
});

// What this file protects: /rest/v1 is served by a handler of its own, outside the Hono app that
// serves every other surface (src/rest/server.ts, for speed). At the HTTP level it must still
// behave as the rest of the service does: a request id on every answer and in the access line,
// the same CORS headers, the body limit (declared or chunked, the connection closed after a
// refusal), API key and token checks before anything else, and the routes the app had.

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const LIMIT = 4096;
let svc: TestService;
let owner: Session;
beforeAll(async () => {
  svc = await startTestService({ BODY_LIMIT_BYTES: String(LIMIT) });
  owner = await signUp(svc, 'REST over HTTP');
});
afterAll(() => svc?.stop());

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** A request through node:http, so the body can be sent in chunks of unknown total length. */
function chunked(path: string, chunks: string[], headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${svc.url}${path}`, { method: 'POST', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

const auth = () => ({ apikey: svc.anonKey, authorization: `Bearer ${owner.access_token}` });

describe('/rest/v1 at the HTTP level', () => {
  it('gives a request id (a well-formed incoming one kept) and logs the access line with it', async () => {
    const fresh = await call(svc, 'GET', '/rest/v1/contacts?select=id', { token: owner.access_token });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const traced = await call(svc, 'GET', '/rest/v1/contacts?select=id', {
      token: owner.access_token,
      headers: { 'x-request-id': 'rest-trace-12345' },
    });
    expect(traced.headers.get('x-request-id')).toBe('rest-trace-12345');
    const line = svc.logLines().find((l) => l.req_id === 'rest-trace-12345');
    // The query string is never logged.
    expect(line).toMatchObject({
      level: 30,
      msg: 'request',
      method: 'GET',
      path: '/rest/v1/contacts',
      status: 200,
    });
    expect(line.ms).toEqual(expect.any(Number));
  });

  it('sends the CORS headers every other surface sends, on answers and on refusals', async () => {
    const other = await call(svc, 'GET', '/health', { headers: { origin: 'https://app.example' } });
    const headers = ['access-control-allow-origin', 'access-control-expose-headers', 'vary'];
    for (const r of [
      await call(svc, 'GET', '/rest/v1/contacts', {
        token: owner.access_token,
        headers: { origin: 'https://app.example' },
      }),
      await call(svc, 'GET', '/rest/v1/contacts', {
        token: 'not-a-token',
        headers: { origin: 'https://app.example' },
      }),
    ]) {
      for (const h of headers) expect(r.headers.get(h), h).toBe(other.headers.get(h));
    }
    const preflight = await fetch(`${svc.url}/rest/v1/contacts`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'PATCH' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/PATCH/);
  });

  it('refuses a body declared over the limit before reading it, and closes the connection', async () => {
    const r = await fetch(`${svc.url}/rest/v1/contacts`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ first_name: 'x'.repeat(LIMIT) }),
    });
    expect(r.status).toBe(413);
    expect(r.headers.get('connection')).toBe('close');
    expect(await r.json()).toMatchObject({ error: 'payload_too_large', details: { limit_bytes: LIMIT } });
  });

  it('refuses a chunked body once it outgrows the limit, writes nothing, and closes the connection', async () => {
    const name = `Chunked ${Date.now()}`;
    const half = 'x'.repeat(LIMIT / 2);
    const r = await chunked('/rest/v1/contacts', [`{"first_name":"${name}","notes":"`, half, half, '"}'], {
      ...auth(),
      'content-type': 'application/json',
    });
    expect(r.status).toBe(413);
    expect(r.headers.connection).toBe('close');
    expect(JSON.parse(r.body)).toMatchObject({ error: 'payload_too_large' });
    const found = await call(svc, 'GET', `/rest/v1/contacts?first_name=eq.${encodeURIComponent(name)}`, {
      token: owner.access_token,
    });
    expect(found.json).toEqual([]);
    // A chunked body within the limit is read whole.
    const ok = await chunked('/rest/v1/contacts', [`{"first_name":"${name}",`, '"last_name":"Small"}'], {
      ...auth(),
      'content-type': 'application/json',
    });
    expect(ok.status).toBe(201);
  });

  it('checks the API key and the token before the route: an unknown path is 401 without them', async () => {
    expect((await fetch(`${svc.url}/rest/v1/contacts/extra`)).status).toBe(401);
    const bad = await call(svc, 'GET', '/rest/v1/contacts', { token: 'svc_ak_raw_key' });
    expect(bad.status).toBe(401);
    expect(bad.json.details.auth_endpoint).toMatch(/\/functions\/v1\/agent-auth$/);
    const unknown = await call(svc, 'GET', '/rest/v1/contacts/extra', { token: owner.access_token });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({
      error: 'not_found',
      message: 'No route for GET /rest/v1/contacts/extra',
      details: {},
    });
    const put = await call(svc, 'PUT', '/rest/v1/contacts', { token: owner.access_token, body: {} });
    expect(put.status).toBe(404);
  });

  it('refuses a token it accepted a moment ago once it has expired, and a known token beside a bad API key', async () => {
    // Both tokens are remembered after their first use (knownCaller answers from memory): the
    // memory must still say no once the time is up, and must not stand in for the API key.
    const payload = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as { exp: number };
    // The owner's own claims, valid for one to two seconds: `exp` is whole seconds after a
    // whole-second `iat`, so a lifetime of 1 could end a moment after it was signed.
    const short = await svc.services.tokens.sign(payload(owner.access_token), 2);
    const read = (token: string, apikey = svc.anonKey) =>
      call(svc, 'GET', '/rest/v1/contacts?select=id', { token, headers: { apikey } });
    expect((await read(short)).status).toBe(200);
    expect((await read(short)).status).toBe(200);
    await new Promise((r) => setTimeout(r, payload(short).exp * 1000 - Date.now() + 50));
    const expired = await read(short);
    expect(expired.status).toBe(401);
    expect(expired.json.error).toBe('token_expired');
    // A user's token is no API key, however well it is known.
    expect((await read(owner.access_token)).status).toBe(200);
    expect((await read(owner.access_token, owner.access_token)).status).toBe(401);
  });

  it('redirects /rest/v1/ to its description, and answers HEAD with the headers and no body', async () => {
    const slash = await fetch(`${svc.url}/rest/v1/`, {
      headers: { apikey: svc.anonKey },
      redirect: 'manual',
    });
    expect(slash.status).toBe(308);
    expect(slash.headers.get('location')).toBe('/rest/v1');
    await call(svc, 'POST', '/rest/v1/contacts', { token: owner.access_token, body: { first_name: 'Head' } });
    const head = await fetch(`${svc.url}/rest/v1/contacts?first_name=eq.Head`, {
      method: 'HEAD',
      headers: { ...auth(), prefer: 'count=exact' },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-range')).toBe('0-0/1');
    expect(await head.text()).toBe('');
  });
});

// The authorization server of the MCP endpoint (issue 31, section 2), driven over HTTP as a client
// and the consent page drive it: metadata, registration, authorize's checks, the person's consent
// (organization, scopes capped by the plan, the agent seat), the code for tokens with PKCE, the
// tokens at the MCP endpoint, refresh rotation with reuse detection, and revocation.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { setPlan } from '../helpers/mcp.ts';
import { authorizeQuery, decide, pkce, REDIRECT, registerClient, tokenRequest } from '../helpers/oauth.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  // The flows below sign in many times from one address; the limits have a test of their own.
  svc = await startTestService({
    RATE_LIMIT_AGENT_AUTH_PER_MINUTE: '1000',
    AGENT_REGISTER_PER_IP_PER_HOUR: '1000',
  });
}, 60_000);
afterAll(() => svc?.stop());

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;

const authorize = (query: Record<string, string>) =>
  fetch(`${svc.url}/oauth/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' });

const listTools = (token: string) =>
  fetch(`${svc.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

/** The whole flow up to tokens for `session`'s organization. */
async function signedInClient(session: Session, scopes = ['read', 'write']) {
  const client = await registerClient(svc);
  const { verifier, challenge } = pkce();
  const params = authorizeQuery(svc, client.client_id, challenge);
  const decision = await decide(svc, session.access_token, params, {
    approve: true,
    organization_id: orgOf(session),
    scopes,
  });
  expect(decision.status).toBe(200);
  const back = new URL(decision.json.redirect_to);
  expect(back.searchParams.get('state')).toBe('st-1');
  const code = back.searchParams.get('code') as string;
  const tokens = await tokenRequest(svc, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: client.client_id,
    resource: `${svc.url}/mcp`,
  });
  expect(tokens.status).toBe(200);
  return { client, tokens: tokens.json, code, verifier };
}

describe('metadata (RFC 8414)', () => {
  it('names the endpoints, S256 only, and metadata documents', async () => {
    const r = await fetch(`${svc.url}/.well-known/oauth-authorization-server`);
    expect(await r.json()).toMatchObject({
      issuer: svc.url,
      authorization_endpoint: `${svc.url}/oauth/authorize`,
      token_endpoint: `${svc.url}/oauth/token`,
      registration_endpoint: `${svc.url}/oauth/register`,
      revocation_endpoint: `${svc.url}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    });
  });
});

describe('authorize', () => {
  it('sends a good request to the consent page with its parameters', async () => {
    const { client_id } = await registerClient(svc);
    const r = await authorize(authorizeQuery(svc, client_id, pkce().challenge));
    expect(r.status).toBe(302);
    const to = new URL(r.headers.get('location') as string);
    expect(to.pathname).toBe('/oauth/consent');
    expect(to.searchParams.get('client_id')).toBe(client_id);
  });

  it('never redirects to a URI the client did not register, and accepts any loopback port', async () => {
    const { client_id } = await registerClient(svc);
    const q = authorizeQuery(svc, client_id, pkce().challenge);
    const wrong = await authorize({ ...q, redirect_uri: 'https://evil.example/cb' });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error).toBe('invalid_request');
    const otherPort = await authorize({ ...q, redirect_uri: 'http://127.0.0.1:40001/callback' });
    expect(otherPort.status).toBe(302);
    expect(new URL(otherPort.headers.get('location') as string).pathname).toBe('/oauth/consent');
    const otherPath = await authorize({ ...q, redirect_uri: 'http://127.0.0.1:40001/elsewhere' });
    expect(otherPath.status).toBe(400);
  });

  it('tells the client at its redirect URI when PKCE or the resource is missing or wrong', async () => {
    const { client_id } = await registerClient(svc);
    const q = authorizeQuery(svc, client_id, pkce().challenge);
    const cases: [Record<string, string>, string][] = [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
      [{ resource: '' }, 'invalid_target'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
    ];
    for (const [change, error] of cases) {
      const r = await authorize({ ...q, ...change });
      expect(r.status).toBe(302);
      const back = new URL(r.headers.get('location') as string);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(back.searchParams.get('error')).toBe(error);
      expect(back.searchParams.get('state')).toBe('st-1');
    }
  });

  it('refuses an unknown client', async () => {
    const r = await authorize(authorizeQuery(svc, 'svc_oc_nobody', pkce().challenge));
    expect(r.status).toBe(401);
    expect((await r.json()).error).toBe('invalid_client');
  });
});

describe('consent and tokens', () => {
  it('issues agent JWTs for the MCP endpoint, capped by the plan, usable there', async () => {
    const session = await signUp(svc, 'Consenting Shop');
    const { client, tokens } = await signedInClient(session);
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'read' });
    expect(tokens.expires_in).toBeLessThanOrEqual(3600);
    const claims = claimsOf(tokens.access_token);
    expect(claims).toMatchObject({
      role: 'authenticated',
      org_role: 'agent',
      organization_id: orgOf(session),
      agent_scopes: ['read'], // the free plan gives agents read only
      app_metadata: { organization_id: orgOf(session), org_role: 'agent', agent_scopes: ['read'] },
      client_id: client.client_id,
      aud: `${svc.url}/mcp`,
    });
    expect(Number(claims.exp) - Number(claims.iat)).toBeLessThanOrEqual(3600);
    expect((await listTools(tokens.access_token)).status).toBe(200);
  });

  it('lists the grant beside the keys as a connected app, and counts it as an agent', async () => {
    const session = await signUp(svc, 'Seat Shop');
    const { client } = await signedInClient(session);
    const keys = await call(svc, 'GET', '/rest/v1/agent_api_keys?select=name,oauth_client_id,is_active', {
      token: session.access_token,
    });
    expect(keys.json).toEqual([
      { name: 'Test MCP Client', oauth_client_id: client.client_id, is_active: true },
    ]);
    // The free plan has one agent seat, and the grant holds it.
    const key = await call(svc, 'POST', '/functions/v1/agent-api-key-create', {
      token: session.access_token,
      body: { name: 'second', scopes: ['read'] },
    });
    expect(key.status).toBe(403);
  });

  it('is for owners and admins only', async () => {
    const owner = await signUp(svc, 'Owned Shop');
    const stranger = await signUp(svc, 'Other Shop');
    const { client_id } = await registerClient(svc);
    const d = await decide(svc, stranger.access_token, authorizeQuery(svc, client_id, pkce().challenge), {
      approve: true,
      organization_id: orgOf(owner),
      scopes: ['read'],
    });
    expect(d.status).toBe(403);
  });

  it('answers a denial with access_denied at the redirect URI', async () => {
    const session = await signUp(svc, 'Denying Shop');
    const { client_id } = await registerClient(svc);
    const d = await decide(svc, session.access_token, authorizeQuery(svc, client_id, pkce().challenge), {
      approve: false,
    });
    expect(new URL(d.json.redirect_to).searchParams.get('error')).toBe('access_denied');
  });

  it('takes a code once, with its verifier only', async () => {
    const session = await signUp(svc, 'Code Shop');
    await setPlan(svc, session, 'starter');
    const { client_id } = await registerClient(svc);
    const { verifier, challenge } = pkce();
    const params = authorizeQuery(svc, client_id, challenge);
    const d = await decide(svc, session.access_token, params, {
      approve: true,
      organization_id: orgOf(session),
      scopes: ['read', 'write'],
    });
    const code = new URL(d.json.redirect_to).searchParams.get('code') as string;
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id };
    const bad = await tokenRequest(svc, { ...form, code_verifier: pkce().verifier });
    expect(bad).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    // A failed attempt used the code up: a stolen code and a guessed verifier get nothing.
    const again = await tokenRequest(svc, { ...form, code_verifier: verifier });
    expect(again).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
  });

  it('gives write on a plan that allows it, and rotates refresh tokens', async () => {
    const session = await signUp(svc, 'Refresh Shop');
    await setPlan(svc, session, 'starter');
    const { client, tokens } = await signedInClient(session);
    expect(claimsOf(tokens.access_token).agent_scopes).toEqual(['read', 'write']);
    const next = await tokenRequest(svc, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.client_id,
    });
    expect(next.status).toBe(200);
    expect(next.json.refresh_token).not.toBe(tokens.refresh_token);
    expect((await listTools(next.json.access_token)).status).toBe(200);
    // The next one rotates on; the first one, used twice after its child was used, is a replay.
    const third = await tokenRequest(svc, {
      grant_type: 'refresh_token',
      refresh_token: next.json.refresh_token,
      client_id: client.client_id,
    });
    expect(third.status).toBe(200);
    const replay = await tokenRequest(svc, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.client_id,
    });
    expect(replay).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    // The replay revoked the grant: its live access token and its refresh tokens stop working.
    expect((await listTools(third.json.access_token)).status).toBe(401);
    const after = await tokenRequest(svc, {
      grant_type: 'refresh_token',
      refresh_token: third.json.refresh_token,
      client_id: client.client_id,
    });
    expect(after.status).toBe(400);
  });

  it('revokes the grant by its refresh token (RFC 7009), and an owner revokes it like a key', async () => {
    const session = await signUp(svc, 'Revoking Shop');
    const first = await signedInClient(session);
    const r = await tokenRequest(
      svc,
      { token: first.tokens.refresh_token, client_id: first.client.client_id },
      '/oauth/revoke',
    );
    expect(r.status).toBe(200);
    expect((await listTools(first.tokens.access_token)).status).toBe(401);

    const second = await signedInClient(session);
    expect((await listTools(second.tokens.access_token)).status).toBe(200);
    const revoked = await call(
      svc,
      'PATCH',
      `/rest/v1/agent_api_keys?oauth_client_id=eq.${encodeURIComponent(second.client.client_id)}`,
      { token: session.access_token, body: { is_active: false } },
    );
    expect(revoked.status).toBeLessThan(300);
    // As for a key: at once where the revocation's NOTIFY has arrived, at worst after
    // AGENT_KEY_RECHECK_SECONDS (PostgreSQL delivers it on its own connection).
    await expect
      .poll(async () => (await listTools(second.tokens.access_token)).status, { timeout: 10_000 })
      .toBe(401);
    const refresh = await tokenRequest(svc, {
      grant_type: 'refresh_token',
      refresh_token: second.tokens.refresh_token,
      client_id: second.client.client_id,
    });
    expect(refresh).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
  });

  it('logs each step as agent-auth attempts are', async () => {
    const session = await signUp(svc, 'Logged Shop');
    await signedInClient(session);
    const attempts = await call(svc, 'GET', '/rest/v1/agent_auth_attempts?select=outcome,reason&order=id', {
      token: session.access_token,
    });
    expect(attempts.json).toEqual([
      { outcome: 'success', reason: 'oauth_consent' },
      { outcome: 'success', reason: 'oauth_code' },
    ]);
  });
});

describe('limits per address', () => {
  it('limits registrations and token requests as agent-register and agent-auth are', async () => {
    const strict = await startTestService({
      RATE_LIMIT_AGENT_AUTH_PER_MINUTE: '2',
      AGENT_REGISTER_PER_IP_PER_HOUR: '2',
    });
    try {
      await registerClient(strict);
      await registerClient(strict);
      await expect(registerClient(strict)).rejects.toThrow(/429/);
      const form = { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'c' };
      expect((await tokenRequest(strict, form)).status).toBe(400);
      expect((await tokenRequest(strict, form)).status).toBe(400);
      expect((await tokenRequest(strict, form)).status).toBe(429);
    } finally {
      await strict.stop();
    }
  });
});

describe('registrations', () => {
  it('forgets one no consent used within a day, keeps one that was used', async () => {
    const unused = await registerClient(svc);
    const session = await signUp(svc, 'Kept Client Shop');
    const used = await signedInClient(session);
    await svc.services.db.query(
      "update app.oauth_clients set created_at = now() - interval '25 hours' where client_id = any($1)",
      [[unused.client_id, used.client.client_id]],
    );
    const ask = (clientId: string) => authorize(authorizeQuery(svc, clientId, pkce().challenge));
    expect((await ask(unused.client_id)).status).toBe(401);
    expect((await ask(used.client.client_id)).status).toBe(302);
  });
});

describe('client ID metadata documents', () => {
  it('fetches the document a client_id names, keeps it, and refuses one on a private address', async () => {
    let served = 0;
    const docs = createServer((req, res) => {
      served++;
      const url = `http://127.0.0.1:${(docs.address() as AddressInfo).port}${req.url}`;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ client_id: url, client_name: 'Documented Client', redirect_uris: [REDIRECT] }),
      );
    });
    await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(docs.address() as AddressInfo).port}`;
    const clientId = `http://${host}/client.json`;
    // Without the allow list (development and tests only), a private address is never fetched.
    const refused = await authorize(authorizeQuery(svc, clientId, pkce().challenge));
    expect(refused.status).toBe(401);
    expect((await refused.json()).error_description).toMatch(/only https|not a public/);
    expect(served).toBe(0);

    const open = await startTestService({ MEDIA_FETCH_ALLOW_HOSTS: host });
    try {
      const go = (q: Record<string, string>) =>
        fetch(`${open.url}/oauth/authorize?${new URLSearchParams(q)}`, { redirect: 'manual' });
      const first = await go(authorizeQuery(open, clientId, pkce().challenge));
      expect(first.status).toBe(302);
      expect(new URL(first.headers.get('location') as string).pathname).toBe('/oauth/consent');
      const second = await go(authorizeQuery(open, clientId, pkce().challenge));
      expect(second.status).toBe(302);
      expect(served).toBe(1); // kept for an hour
      const session = await signUp(open, 'Document Shop');
      const described = await fetch(`${open.url}/oauth/authorize/describe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${session.access_token}` },
        body: JSON.stringify({ params: authorizeQuery(open, clientId, pkce().challenge) }),
      });
      expect(await described.json()).toMatchObject({
        client_name: 'Documented Client',
        redirect_host: '127.0.0.1:53682',
        organizations: [{ id: orgOf(session), role: 'owner', mcp_scopes: ['read'] }],
      });
    } finally {
      await open.stop();
      docs.close();
    }
  });
});

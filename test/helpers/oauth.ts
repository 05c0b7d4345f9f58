import { createHash, randomBytes } from 'node:crypto';
import type { TestService } from './service.ts';

/** A PKCE pair (RFC 7636, S256). */
export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const REDIRECT = 'http://127.0.0.1:53682/callback';

/** Dynamic Client Registration of a public client. */
export async function registerClient(svc: TestService, redirectUris = [REDIRECT], name = 'Test MCP Client') {
  const r = await fetch(`${svc.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris }),
  });
  if (r.status !== 201) throw new Error(`registration failed: ${r.status} ${await r.text()}`);
  return (await r.json()) as { client_id: string };
}

/** The query of an authorization request for the MCP endpoint at /mcp. */
export function authorizeQuery(
  svc: TestService,
  clientId: string,
  challenge: string,
  extra: Record<string, string> = {},
) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-1',
    resource: `${svc.url}/mcp`,
    scope: 'read write',
    ...extra,
  };
}

/** What the consent page does once the person decides: POST the decision with their token. */
export async function decide(
  svc: TestService,
  userToken: string,
  params: Record<string, string>,
  decision: { approve: boolean; organization_id?: string; scopes?: string[] },
) {
  const r = await fetch(`${svc.url}/oauth/authorize/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${userToken}` },
    body: JSON.stringify({ params, ...decision }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the answer has
  return { status: r.status, json: (await r.json()) as any };
}

/** A POST to the token (or revocation) endpoint as a form, as OAuth clients send it. */
export async function tokenRequest(svc: TestService, form: Record<string, string>, path = '/oauth/token') {
  const r = await fetch(`${svc.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  const text = await r.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the answer has
  return { status: r.status, json: (text ? JSON.parse(text) : null) as any };
}

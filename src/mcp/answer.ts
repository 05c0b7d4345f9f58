// Answering a POST to the MCP endpoint: the agent's token and key, the calls metered, then the
// MCP server or a direct tool call. Loaded by route.ts at the endpoint's first POST, with the MCP
// SDK and its validators (some 130 files): a start never loads them (docs/performance.md, issue 29).

import { tokenScopes } from '../domain/agent-keys.ts';
import { claimedOrganization, type Principal } from '../platform/db/database.ts';
import {
  AppError,
  agentKeyGone,
  forbidden,
  insufficientScope,
  toAppError,
  unauthorized,
  withHeaders,
} from '../platform/errors.ts';
import {
  agentAuthUrl,
  bearerFrom,
  principalFromClaims,
  rawApiKeyRefusal,
  verifyBearer,
} from '../platform/http/authenticate.ts';
import { meterCall } from '../platform/http/meter.ts';
import { logFailure } from '../platform/log.ts';
import { OTHER } from '../platform/metrics/route-labels.ts';
import type { Services } from '../services.ts';
import { answerDirect, directCall } from './direct.ts';
import type { McpPost, TextAnswer } from './post.ts';
import { acceptsAudience, mcpChallenge, metadataUrl } from './protected-resource.ts';
import { unavailableResponse } from './rpc-errors.ts';
import { BY_NAME, handleMcp } from './server.ts';
import { mayCall, type ToolContext } from './tool.ts';

type Agent = Extract<Principal, { kind: 'agent' }>;

/**
 * RFC 6750 and RFC 9728: a refused bearer token names itself in WWW-Authenticate with the
 * endpoint's resource metadata, so an MCP client can sign in with OAuth; the description keeps
 * what a person or an agent holding a key needs (a raw key's names agent-auth). Failures (the key
 * check could not run) pass unchanged, for the app's error handler to log.
 */
function challenged(err: unknown, metadata: string, tokenSent: boolean): unknown {
  const e = toAppError(err);
  if (e.status !== 401) return err;
  const challenge = mcpChallenge(metadata, {
    // RFC 6750 section 3.1: a request without credentials gets no error code.
    error: tokenSent ? 'invalid_token' : undefined,
    description: e.message,
  });
  // Replaces the challenge the error brought (a raw key's): the description keeps its advice.
  return new AppError(e.status, e.code, e.message, e.details, e.extra, {
    ...e.headers,
    'WWW-Authenticate': challenge,
  });
}

/** Only an agent JWT opens the MCP server (spec 4.6, 5.4); one issued for this resource (RFC 8707). */
async function agentOf(s: Services, authorization: string | undefined) {
  const token = bearerFrom(authorization);
  if (!token)
    throw unauthorized(
      `Send an agent JWT as "Authorization: Bearer <token>": get one from agent-auth (POST ${agentAuthUrl(s.publicUrl)}) with an API key, or sign in with an OAuth client`,
    );
  const rawKey = rawApiKeyRefusal(token, s.publicUrl);
  if (rawKey) throw rawKey;
  const claims = await verifyBearer(s.tokens, token);
  const principal = principalFromClaims(claims);
  if (principal.kind === 'anon') throw unauthorized('The anon key identifies no one: send an agent JWT');
  if (principal.kind !== 'agent') {
    throw forbidden(
      'The MCP server is for AI agents: use an agent JWT from agent-auth (people use /rest/v1)',
    );
  }
  if (!acceptsAudience(claims.aud, s.publicUrl)) {
    throw unauthorized('This token was issued for another resource (its aud): get one for this MCP server');
  }
  const org = claimedOrganization(principal);
  if (!org || !(await s.keyCheck.isLive(principal.keyId, org))) throw agentKeyGone();
  return principal as Agent;
}

/**
 * An OAuth client's token without the scope a tool needs: 403 insufficient_scope naming it, so the
 * client can ask the person for more (MCP authorization, "scope challenge"). Tokens from agent
 * keys are answered inside the tool result as before: their remedy is a new key, not a sign-in.
 */
function scopeRefusal(principal: Agent, body: unknown, metadata: string) {
  if (typeof principal.claims.client_id !== 'string') return undefined;
  const messages = Array.isArray(body) ? body : [body];
  for (const m of messages) {
    const call = m as { method?: unknown; params?: { name?: unknown } } | null;
    if (call?.method !== 'tools/call' || typeof call.params?.name !== 'string') continue;
    const tool = BY_NAME.get(call.params.name);
    if (!tool || mayCall(principal, tool)) continue;
    const needed = tokenScopes(principal).includes(tool.scope)
      ? tokenScopes(principal)
      : [...tokenScopes(principal), tool.scope];
    const message = `${tool.name} needs the ${tool.scope} scope, which this token was not granted: sign in again and allow it`;
    return withHeaders(
      insufficientScope(message, { required_scope: tool.scope, granted_scopes: tokenScopes(principal) }),
      {
        'WWW-Authenticate': mcpChallenge(metadata, {
          error: 'insufficient_scope',
          scope: needed.join(' '),
          description: message,
        }),
      },
    );
  }
  return undefined;
}

/**
 * Protocol versions whose clients may send JSON-RPC batches: batching left MCP in 2025-06-18. A
 * request without MCP-Protocol-Version is taken as 2025-03-26, as the transport specification says.
 */
const BATCHING_VERSIONS = new Set(['2024-11-05', '2025-03-26']);

/** JSON-RPC's answer to a batch under a version without them: Invalid Request, nothing done. */
const batchRefused = (version: string): TextAnswer => ({
  status: 400,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: `Invalid Request: protocol version ${version} has no JSON-RPC batches (they left MCP in 2025-06-18); send one message per POST`,
    },
  }),
});

/** The body as JSON, or undefined when it is not JSON (the transport answers that: -32700). */
function json(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** JSON-RPC requests in a body (notifications and responses cost nothing). */
const callsIn = (body: unknown): number =>
  (Array.isArray(body) ? body : [body]).filter(
    (m) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m,
  ).length;

/** JSON-RPC methods the server answers (src/mcp/server.ts): metric targets besides the tools. */
const METHODS = new Set([
  'initialize',
  'notifications/initialized',
  'ping',
  'tools/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
]);

/** The metric target of a body: a known tool's name, a known method, `batch` or `other`. */
function targetOf(body: unknown): string {
  if (Array.isArray(body)) return 'batch';
  const m = body as { method?: unknown; params?: { name?: unknown } } | null;
  if (typeof m !== 'object' || m === null || typeof m.method !== 'string') return OTHER;
  if (m.method === 'tools/call') {
    const name = m.params?.name;
    return typeof name === 'string' && BY_NAME.has(name) ? name : OTHER;
  }
  return METHODS.has(m.method) ? m.method : OTHER;
}

/**
 * A POST to the endpoint: the agent's token and key, the calls metered, then the MCP server (or,
 * for a lone tools/call, the tool itself: direct.ts). Errors are thrown (a refused token with its
 * challenge) for the caller to answer as the app does.
 */
export async function answerPost(s: Services, p: McpPost): Promise<Response | TextAnswer> {
  let body: { value: unknown } | undefined;
  try {
    const metadata = metadataUrl(s.publicUrl, p.path);
    const principal = await agentOf(s, p.authorization).catch((err) => {
      throw challenged(err, metadata, Boolean(p.authorization));
    });
    const text = await p.text();
    body = json(text);
    p.target = body ? targetOf(body.value) : OTHER;
    const refused = body && scopeRefusal(principal, body.value, metadata);
    if (refused) throw refused;
    const version = p.request.headers.get('mcp-protocol-version');
    if (body && Array.isArray(body.value) && version !== null && !BATCHING_VERSIONS.has(version))
      return batchRefused(version);
    const ctx: ToolContext = { s, principal, log: p.log };
    // Not JSON: no call was made, so nothing is metered; the SDK's transport gives JSON-RPC's
    // answer (-32700) from the text itself.
    if (!body) return await handleMcp(p.withBody(text), undefined, ctx);
    for (let i = Math.max(1, callsIn(body.value)); i > 0; i--) await meterCall(s, principal);
    const h = p.request.headers;
    const call = directCall(
      {
        accept: h.get('accept'),
        contentType: h.get('content-type'),
        protocolVersion: h.get('mcp-protocol-version'),
      },
      body.value,
      BY_NAME,
    );
    if (call) {
      const text = await answerDirect(call, ctx);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (!ctx.unavailable) return { status: 200, headers, body: text };
      for (const [k, v] of Object.entries(ctx.unavailable.headers)) headers[k.toLowerCase()] = v;
      return { status: 503, headers, body: text };
    }
    const res = await handleMcp(p.request, body.value, ctx);
    if (!ctx.unavailable) return res;
    const headers = new Headers(res.headers);
    for (const [k, v] of Object.entries(ctx.unavailable.headers)) headers.set(k, v);
    return new Response(res.body, { status: 503, headers });
  } catch (err) {
    // Even before the MCP server is reached, a client reads a JSON-RPC error (logged by the
    // app's handler otherwise: here, once).
    const e = toAppError(err);
    if (e.code !== 'service_unavailable') throw err;
    logFailure(p.log, err);
    body ??= json(await p.text().catch(() => ''));
    return unavailableResponse(e, body?.value);
  }
}

import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { createKeyCheck } from '../domain/agent-keys.ts';
import { claimedOrganization, type Principal } from '../platform/db/database.ts';
import { AppError, errorBody, forbidden, toAppError, unauthorized } from '../platform/errors.ts';
import {
  bearerChallenge,
  bearerToken,
  principalFromClaims,
  rawApiKeyRefusal,
  verifyBearer,
} from '../platform/http/authenticate.ts';
import type { AppEnv } from '../platform/http/env.ts';
import { meterCall } from '../platform/http/meter.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { originPolicy } from './origin.ts';
import { handleMcp } from './server.ts';

type Agent = Extract<Principal, { kind: 'agent' }>;

/** RFC 6750: a refused bearer token names itself in WWW-Authenticate. */
function refuse(c: Context<AppEnv>, e: AppError) {
  if (e.status === 401) c.header('WWW-Authenticate', bearerChallenge(e.message, 'mcp-server'));
  // An error that brings its own challenge (a raw API key's names agent-auth) replaces that one.
  for (const [k, v] of Object.entries(e.headers)) c.header(k, v);
  return c.json(errorBody(e), e.status as 401);
}

/** Only an agent JWT opens the MCP server (spec 4.6, 5.4). */
async function agentOf(s: Services, c: Context<AppEnv>, keyStillValid: ReturnType<typeof createKeyCheck>) {
  const token = bearerToken(c);
  if (!token)
    throw unauthorized('Send an agent JWT as "Authorization: Bearer <token>"; get one from agent-auth');
  const rawKey = rawApiKeyRefusal(token, s.publicUrl);
  if (rawKey) throw rawKey;
  const principal = principalFromClaims(await verifyBearer(s.tokens, token));
  if (principal.kind === 'anon') throw unauthorized('The anon key identifies no one: send an agent JWT');
  if (principal.kind !== 'agent') {
    throw forbidden(
      'The MCP server is for AI agents: use an agent JWT from agent-auth (people use /rest/v1)',
    );
  }
  const org = claimedOrganization(principal);
  if (!org || !(await keyStillValid(principal.keyId, org))) {
    throw unauthorized('The API key behind this token was revoked or has expired; call agent-auth again');
  }
  return principal as Agent;
}

/** JSON-RPC requests in a body (notifications and responses cost nothing). */
const callsIn = (body: unknown): number =>
  (Array.isArray(body) ? body : [body]).filter(
    (m) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m,
  ).length;

/** POST /functions/v1/mcp-server: MCP Streamable HTTP, JSON responses, no sessions. */
export function mcpRoutes(s: Services) {
  const keyStillValid = createKeyCheck(s.db);
  const policy = originPolicy(s.config, s.publicUrl);
  const app = newRouter();
  app.use('/mcp-server', async (c, next) => {
    const refused = policy.refusal({ origin: c.req.header('origin'), host: c.req.header('host') });
    if (refused) return c.json(errorBody(refused), 403);
    await next();
  });
  // Described for /openapi.json; the MCP SDK, not zod-openapi, reads and answers the body.
  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/mcp-server',
    summary: 'Hosted MCP server (Streamable HTTP, JSON responses, stateless)',
    description:
      'JSON-RPC 2.0: initialize, ping, tools/list, tools/call, resources/list, resources/read, resources/templates/list. Agent JWT only; send Accept: application/json, text/event-stream. Browsers only from PUBLIC_URL or MCP_ALLOWED_ORIGINS (403 otherwise).',
    request: jsonBody(
      z.object({
        jsonrpc: z.literal('2.0'),
        id: z.union([z.string(), z.number()]).optional(),
        method: z.string().openapi({ example: 'tools/call' }),
        params: z.record(z.string(), z.unknown()).optional(),
      }),
    ),
    responses: {
      200: jsonResponse(z.record(z.string(), z.unknown()), 'JSON-RPC response'),
      202: { description: 'Notifications only: accepted, no body' },
      ...errorResponses(401, 403, 405, 429),
    },
  });
  app.on(['GET', 'DELETE'], '/mcp-server', (c) => {
    c.header('Allow', 'POST');
    return c.json(
      errorBody(
        new AppError(
          405,
          'method_not_allowed',
          'This MCP server is stateless: send JSON-RPC messages with POST',
          {
            allowed_methods: ['POST'],
          },
        ),
      ),
      405,
    );
  });
  app.post('/mcp-server', async (c) => {
    let principal: Agent;
    try {
      principal = await agentOf(s, c, keyStillValid);
    } catch (err) {
      const e = toAppError(err);
      // A refusal is answered here with its challenge; a failure (the key check could not run)
      // goes to the app's error handler, which logs its cause.
      if (e.status >= 500) throw err;
      return refuse(c, e);
    }
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      // JSON-RPC's own answer to a body that is not JSON.
      return c.json(
        { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON' } },
        400,
      );
    }
    for (let i = Math.max(1, callsIn(body)); i > 0; i--) await meterCall(s, principal);
    return handleMcp(c.req.raw, body, { s, principal, log: c.get('log') });
  });
  return app;
}

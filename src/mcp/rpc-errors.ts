import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { type AppError, errorBody } from '../platform/errors.ts';

// JSON-RPC errors as a client should read them: the right code and one short line.

/**
 * A JSON-RPC error as the SDK sends it (code, message, data) without McpError's "MCP error <code>:"
 * prefix, which the SDK client adds again on its side.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

type Handler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * The SDK parses each request's params with zod before the handler runs and answers a failure
 * as -32603 carrying zod's whole report. JSON-RPC's answer is -32602 with a short message.
 */
export function shortParamErrors(server: Server) {
  // Private in the SDK (1.32): test/mcp/strict-endpoint.test.ts notices if that changes.
  const handlers = (server as unknown as { _requestHandlers?: Map<string, Handler> })._requestHandlers;
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers) {
    handlers.set(method, async (request, extra) => {
      try {
        return await handler(request, extra);
      } catch (err) {
        // A zod error (the SDK's copy of zod, so matched by shape, not class).
        const issues = (err as { issues?: { path: PropertyKey[]; message: string }[] } | null)?.issues;
        if (!Array.isArray(issues)) throw err;
        const what = issues
          .slice(0, 3)
          .map((i) => `${i.path.map(String).join('.') || 'params'}: ${i.message}`)
          .join('; ');
        throw new RpcError(ErrorCode.InvalidParams, `Invalid params for ${method}: ${what}`);
      }
    });
  }
}

/**
 * The JSON-RPC error of a call the service cannot serve for now (its database is out of reach),
 * with the error body every other surface answers as its data. Recorded on `ctx`, so that the
 * HTTP answer carrying it is a 503 with Retry-After (route.ts).
 */
export function unavailable(ctx: { unavailable?: AppError }, e: AppError): RpcError {
  ctx.unavailable = e;
  return new RpcError(ErrorCode.InternalError, e.message, errorBody(e));
}

/**
 * The whole answer when the request could not even reach the MCP server (the agent's key or its
 * plan could not be read): one JSON-RPC error per request in the body, as the SDK would answer it.
 */
export function unavailableResponse(e: AppError, body: unknown): Response {
  const error = { code: ErrorCode.InternalError, message: e.message, data: errorBody(e) };
  const requests = (Array.isArray(body) ? body : [body]).filter(
    (m): m is { id: string | number } => typeof m === 'object' && m !== null && 'method' in m && 'id' in m,
  );
  const answers = requests.map((m) => ({ jsonrpc: '2.0', id: m.id, error }));
  const json = Array.isArray(body) ? answers : (answers[0] ?? { jsonrpc: '2.0', id: null, error });
  return new Response(JSON.stringify(json), {
    status: 503,
    headers: { 'content-type': 'application/json', ...e.headers },
  });
}

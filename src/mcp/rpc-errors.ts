import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

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

import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { runTool, type Tool, type ToolContext } from './tool.ts';

/**
 * The one message an agent sends most, a single `tools/call`, answered without the SDK's
 * transport and server: what they add to it is a WHATWG Response and its body stream, zod's
 * parse of the message and of the result, and the result serialized as a whole object graph
 * (docs/decisions.md, "tools/call answered directly"). Taken only when the SDK would certainly
 * answer exactly so: the headers its transport checks are acceptable, and the message is a plain
 * JSON-RPC request with no key JSON-RPC or tools/call leaves open (`_meta`, `task`, …) and a
 * tool this server has. Anything else goes the SDK's way, which answers (or refuses) as before;
 * `test/mcp/direct-call.test.ts` compares the two answers byte for byte.
 */
export type DirectCall = { id: string | number; tool: Tool; args: Record<string, unknown> | undefined };

/** The request headers the SDK's transport reads before it looks at a message. */
export type TransportHeaders = {
  accept: string | null;
  contentType: string | null;
  protocolVersion: string | null;
};

const plain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const only = (o: Record<string, unknown>, keys: readonly string[]) =>
  Object.keys(o).every((k) => keys.includes(k));

/** The call in `body` when the direct answer is the SDK's answer; undefined for the SDK to handle. */
export function directCall(
  h: TransportHeaders,
  body: unknown,
  tools: ReadonlyMap<string, Tool>,
): DirectCall | undefined {
  // The transport's 406, 415 and 400 (unknown protocol version) stay its own.
  if (!h.accept?.includes('application/json') || !h.accept.includes('text/event-stream')) return;
  if (!isJsonContentType(h.contentType)) return;
  if (h.protocolVersion !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(h.protocolVersion)) return;
  // JSONRPCRequestSchema is strict; RequestIdSchema a string or a safe integer.
  if (!plain(body) || !only(body, ['jsonrpc', 'id', 'method', 'params'])) return;
  if (body.jsonrpc !== '2.0' || body.method !== 'tools/call') return;
  const id = body.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return;
  const params = body.params;
  if (!plain(params) || !only(params, ['name', 'arguments']) || typeof params.name !== 'string') return;
  const tool = tools.get(params.name);
  if (!tool) return;
  const args = params.arguments;
  // zod copies a record key by key, and a copied `__proto__` would set a prototype instead.
  if (args !== undefined && (!plain(args) || Object.hasOwn(args, '__proto__'))) return;
  return { id: id as string | number, tool, args };
}

/**
 * The JSON-RPC answer's text, as the SDK's server and transport write it: `{result, jsonrpc, id}`
 * with the result's keys in CallToolResultSchema's order, or `{jsonrpc, id, error}` for a call
 * that could not be served (the database out of reach). The value is serialized once: the
 * `content` text is that serialization, and `structuredContent` the same text inlined.
 */
export async function answerDirect(call: DirectCall, ctx: ToolContext): Promise<string> {
  const id = JSON.stringify(call.id);
  try {
    const { value, isError } = await runTool(call.tool, ctx, call.args);
    const text = JSON.stringify(value);
    return `{"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text}${
      isError ? ',"isError":true' : ''
    }},"jsonrpc":"2.0","id":${id}}`;
  } catch (err) {
    // As the SDK's Protocol answers a handler's throw (runTool throws only `unavailable`'s RpcError).
    const e = err as { code?: unknown; message?: string; data?: unknown };
    const error = {
      code: Number.isSafeInteger(e.code) ? e.code : -32603,
      message: e.message ?? 'Internal error',
      ...(e.data !== undefined && { data: e.data }),
    };
    return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(error)}}`;
  }
}

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type Tool as ListedTool,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type MessageExtraInfo,
  ReadResourceRequestSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { tokenScopes } from '../domain/agent-keys.ts';
import { toAppError } from '../platform/errors.ts';
import { logFailure } from '../platform/log.ts';
import { RESOURCES, readResource } from './resources.ts';
import { RpcError, shortParamErrors, unavailable } from './rpc-errors.ts';
import { callTool, listing, mayCall, type Tool, type ToolContext } from './tool.ts';
import { TOOLS } from './tools/index.ts';

const INSTRUCTIONS = `Business operations for one organization: contacts, orders and inventory.
Find records with svc_search or svc_list_*, read one with svc_get_*, change them with the create/update tools.
Results are JSON; their shapes, the order lifecycle and field rules are in the svc://schema/* resources. svc://organization/info tells your plan, limits and scopes.
You see the tools your key's scopes allow: read (every plan) lists and reads; write (a key with write on the starter plan or above) adds create and update; admin (growth or scale) adds the admin tools. An owner raises a key's scopes or the plan.
A refused call returns isError with {error, message, details}: read them and correct the call.`;

// The low-level Server rather than McpServer: tools/list is computed once here, and invalid
// arguments come back as our own validation_error body (McpServer answers those with its text).
const LISTED = listing(TOOLS);
/** The tools by name, for tools/call (here and answered directly: direct.ts). */
export const BY_NAME: ReadonlyMap<string, Tool> = new Map(TOOLS.map((t) => [t.name, t]));
const LISTS = new Map<string, ListedTool[]>();

/** tools/list for this agent: only the tools its token's scopes let it call, computed once per set. */
export function toolsFor(principal: ToolContext['principal']): ListedTool[] {
  const key = tokenScopes(principal).sort().join(' ');
  let list = LISTS.get(key);
  if (!list) {
    list = LISTED.filter((t) => mayCall(principal, t)).map(({ scope: _, ...t }) => t);
    LISTS.set(key, list);
  }
  return list;
}

/**
 * The server's side of each HTTP request's messages. One `Server` serves the whole process: its
 * handlers are registered once, and every request it is handed carries an id of this process's
 * own, under which the request's context is found (`contextOf`) and its answer routed back to the
 * request's transport with the client's id. Client ids cannot be the key: every stateless client
 * numbers its requests from 0 or 1, and several are served at once.
 */
class Dispatch implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private next = 0;
  private readonly pending = new Map<number, { id: RequestId; ctx: ToolContext; to: Transport }>();

  async start() {}
  async close() {}

  /** Hands the server a client's request, answered later on `to` under its own id. */
  request(message: JSONRPCRequest, extra: MessageExtraInfo | undefined, ctx: ToolContext, to: Transport) {
    const id = ++this.next;
    this.pending.set(id, { id: message.id, ctx, to });
    this.onmessage?.({ ...message, id }, extra);
    return id;
  }

  contextOf(requestId: RequestId): ToolContext {
    const p = this.pending.get(requestId as number);
    // Handlers run only for requests handed in by `request`, which are pending until answered.
    if (!p) throw new Error(`No pending MCP request ${String(requestId)}`);
    return p.ctx;
  }

  /** Drops requests whose HTTP request has ended (a client gone before its answer). */
  forget(ids: number[]) {
    for (const id of ids) this.pending.delete(id);
  }

  async send(message: JSONRPCMessage) {
    // The server sends only answers here: it never calls the client nor notifies it.
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const p = this.pending.get(message.id as number);
    if (!p) return;
    this.pending.delete(message.id as number);
    await p.to.send({ ...message, id: p.id });
  }
}

const DISPATCH = new Dispatch();

function sharedServer(): Server {
  const server = new Server(
    { name: 'svc', title: 'Business operations service', version: '1.0.0' },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: new AjvJsonSchemaValidator(),
    },
  );
  const ctxOf = (extra: { requestId: RequestId }) => DISPATCH.contextOf(extra.requestId);
  server.setRequestHandler(ListToolsRequestSchema, (_req, extra) => ({
    tools: toolsFor(ctxOf(extra).principal),
  }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => {
    const tool = BY_NAME.get(req.params.name);
    if (!tool) throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    return callTool(tool, ctxOf(extra), req.params.arguments);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const ctx = ctxOf(extra);
    const value = await readResource(req.params.uri, ctx).catch((err) => {
      const e = toAppError(err);
      if (e.status < 500) throw err;
      // The SDK would answer with the error's own text and log nothing: say nothing of it, log it.
      logFailure(ctx.log, err, { resource: req.params.uri }, 'resource failed');
      if (e.code === 'service_unavailable') throw unavailable(ctx, e);
      throw new RpcError(ErrorCode.InternalError, 'Something went wrong on our side');
    });
    // -32002 is the MCP specification's "resource not found".
    if (value === undefined)
      throw new RpcError(-32002, `Resource not found: ${req.params.uri}`, { uri: req.params.uri });
    return { contents: [{ uri: req.params.uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
  });
  shortParamErrors(server);
  return server;
}

let connected: Promise<void> | undefined;

/**
 * One HTTP request to the MCP endpoint. Stateless: a transport per request, as the SDK requires
 * without sessions (its checks of headers, body and JSON-RPC messages, and its answers, in JSON,
 * no SSE stream), and the one server behind them all. A server per request cost more than the
 * tool call it served (docs/performance.md, "MCP tool call vs REST read").
 */
export async function handleMcp(request: Request, body: unknown, ctx: ToolContext): Promise<Response> {
  connected ??= sharedServer().connect(DISPATCH);
  await connected;
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  const ids: number[] = [];
  // Only requests reach the server. Notifications and responses a client sends are answered 202
  // by the transport and did nothing on a server of their own either (no session to cancel in,
  // nothing asked of the client), so none may reach another client's requests here.
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) ids.push(DISPATCH.request(message, extra, ctx, transport));
  };
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    DISPATCH.forget(ids);
  }
}

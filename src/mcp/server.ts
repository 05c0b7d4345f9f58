import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  type Tool as ListedTool,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { tokenScopes } from '../domain/agent-keys.ts';
import { toAppError } from '../platform/errors.ts';
import { logFailure } from '../platform/log.ts';
import { RESOURCES, readResource } from './resources.ts';
import { RpcError, shortParamErrors, unavailable } from './rpc-errors.ts';
import { callTool, listing, mayCall, type ToolContext } from './tool.ts';
import { TOOLS } from './tools/index.ts';

const INSTRUCTIONS = `Business operations for one organization: contacts, orders and inventory.
Find records with svc_search or svc_list_*, read one with svc_get_*, change them with the create/update tools.
Results are JSON; their shapes, the order lifecycle and field rules are in the svc://schema/* resources. svc://organization/info tells your plan, limits and scopes.
You see the tools your key's scopes allow: read (every plan) lists and reads; write (a key with write on the starter plan or above) adds create and update; admin (growth or scale) adds the admin tools. An owner raises a key's scopes or the plan.
A refused call returns isError with {error, message, details}: read them and correct the call.`;

// The low-level Server rather than McpServer: tools/list is computed once here, and invalid
// arguments come back as our own validation_error body (McpServer answers those with its text).
const LISTED = listing(TOOLS);
const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));
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

// Each Server would otherwise build its own Ajv instance (used only to elicit input, which this
// server never does); that construction was a large part of a call's cost.
const VALIDATOR = new AjvJsonSchemaValidator();

function serverFor(ctx: ToolContext): Server {
  const server = new Server(
    { name: 'svc', title: 'Business operations service', version: '1.0.0' },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: VALIDATOR,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolsFor(ctx.principal) }));
  server.setRequestHandler(CallToolRequestSchema, (req) => {
    const tool = BY_NAME.get(req.params.name);
    if (!tool) throw new RpcError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    return callTool(tool, ctx, req.params.arguments);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
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

/**
 * One HTTP request to the MCP endpoint. Stateless: a server and transport per request, as the
 * SDK requires without sessions, answering in JSON (no SSE stream).
 */
export async function handleMcp(request: Request, body: unknown, ctx: ToolContext): Promise<Response> {
  const server = serverFor(ctx);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await server.close();
  }
}

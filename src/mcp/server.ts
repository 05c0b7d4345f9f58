import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { RESOURCES, readResource } from './resources.ts';
import { callTool, listing, type ToolContext } from './tool.ts';
import { TOOLS } from './tools/index.ts';

const INSTRUCTIONS = `Business operations for one organization: contacts, orders and inventory.
Find records with svc_search or the svc_list_* tools, read one with svc_get_*, change them with the create/update tools.
Read svc://organization/info for the plan, its limits and your scopes, and svc://schema/* for record shapes and the order lifecycle.
A refused call returns isError with {error, message, details}: read details and correct the call.`;

// The low-level Server rather than McpServer: tools/list is computed once here, and invalid
// arguments come back as our own validation_error body (McpServer answers those with its text).
const TOOL_LIST = listing(TOOLS);
const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));
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
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOL_LIST }));
  server.setRequestHandler(CallToolRequestSchema, (req) => {
    const tool = BY_NAME.get(req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
    return callTool(tool, ctx, req.params.arguments);
  });
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const value = await readResource(req.params.uri, ctx);
    // -32002 is the MCP specification's "resource not found".
    if (value === undefined)
      throw new McpError(-32002, `Resource not found: ${req.params.uri}`, { uri: req.params.uri });
    return { contents: [{ uri: req.params.uri, mimeType: 'application/json', text: JSON.stringify(value) }] };
  });
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

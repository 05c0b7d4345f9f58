import { z } from '@hono/zod-openapi';
import { methodNotAllowed } from '../platform/errors.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { MCP_PATH, originPolicy } from './origin.ts';
import { isText, type McpPost, type TextAnswer } from './post.ts';

/**
 * A POST to the endpoint, answered by answer.ts, which is loaded (with the MCP SDK) at the first
 * one: only that request waits for it. Errors are thrown as answer.ts throws them.
 */
let answering: Promise<typeof import('./answer.ts')> | undefined;
export async function answerPost(s: Services, p: McpPost): Promise<Response | TextAnswer> {
  answering ??= import('./answer.ts');
  return (await answering).answerPost(s, p);
}

/**
 * POST /functions/v1/mcp-server: MCP Streamable HTTP, JSON responses, no sessions. The app mounts
 * the same routes at `/mcp` (`path`, the endpoint's full path, and `route`, its path in the router).
 */
export function mcpRoutes(s: Services, { path = MCP_PATH, route = '/mcp-server' } = {}) {
  const policy = originPolicy(s.config, s.publicUrl);
  const app = newRouter();
  app.use(route, async (c, next) => {
    const refused = policy.refusal({ origin: c.req.header('origin'), host: c.req.header('host') });
    if (refused) throw refused;
    await next();
  });
  // Described for /openapi.json; the MCP SDK, not zod-openapi, reads and answers the body.
  if (path === MCP_PATH) describe(app);
  app.on(['GET', 'DELETE'], route, () => {
    throw methodNotAllowed(['POST'], 'This MCP server is stateless: send JSON-RPC messages with POST');
  });
  app.post(route, async (c) => {
    const post: McpPost = {
      path,
      authorization: c.req.header('authorization'),
      text: () => c.req.text(),
      request: c.req.raw,
      withBody: (text) => new Request(c.req.raw, { body: text }),
      log: c.get('log'),
      target: undefined,
    };
    let answer: Awaited<ReturnType<typeof answerPost>>;
    try {
      answer = await answerPost(s, post);
    } finally {
      if (post.target) c.set('mcpTarget', post.target);
    }
    if (!isText(answer)) return answer;
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  });
  return app;
}

function describe(app: ReturnType<typeof newRouter>) {
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
}

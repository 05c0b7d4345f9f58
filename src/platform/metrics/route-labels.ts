/**
 * The `route` and `target` labels of a request (request-durations.ts): a template, never the raw
 * path, and a name from a known set. Each surface names its own: /rest/v1 (src/rest/server.ts)
 * the table when the schema cache has it, the MCP endpoint the tool (src/mcp/route.ts), and the
 * Hono app the template its router matched, as here.
 */

export const FUNCTION_ROUTE = '/functions/v1/:name';
export const MCP_ROUTE = '/functions/v1/mcp-server';
/** A request no route took (a 404 of the router, or a method the route does not take). */
export const UNMATCHED = 'unmatched';
/** A name outside the known set (an unknown table, function or tool): one value for all of them. */
export const OTHER = 'other';

const FUNCTIONS = '/functions/v1/';

/**
 * From the template of the route that answered (hono's routePath) and the path. Functions are
 * `/functions/v1/:name` with the function's name from the template (so only names a route was
 * registered for); a path under /functions/v1 that matched none is `other`. A template of only
 * the catch-all middleware means the router matched nothing.
 */
/** A template of only the catch-all middleware (`app.use('*')`): no route answered. */
export const isCatchAll = (t: string) => t === '*' || t === '/*';

export function appRouteLabels(
  template: string,
  path: string,
  mcpTarget: string | undefined,
): [string, string] {
  if (isCatchAll(template) || template === '')
    return path.startsWith(FUNCTIONS) ? [FUNCTION_ROUTE, OTHER] : [UNMATCHED, ''];
  if (template.startsWith(FUNCTIONS)) {
    if (template === MCP_ROUTE) return [MCP_ROUTE, mcpTarget ?? OTHER];
    const end = template.indexOf('/', FUNCTIONS.length);
    return [FUNCTION_ROUTE, template.slice(FUNCTIONS.length, end < 0 ? undefined : end)];
  }
  return [template, ''];
}

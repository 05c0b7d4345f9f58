import type { Context } from 'hono';
import { authenticate, requireApiKey } from '../platform/http/authenticate.ts';
import { meter } from '../platform/http/meter.ts';
import { newRouter } from '../platform/http/openapi.ts';
import { assertOrganization } from '../platform/http/require-organization.ts';
import type { Services } from '../services.ts';
import { restOpenApi } from './openapi.ts';
import { read } from './read.ts';
import { assertPreferences, restError } from './respond.ts';
import { rpc } from './rpc.ts';
import { insert, remove, update } from './write.ts';

/**
 * Tenant tables carry organization_id and show only the current organization's rows; plans and
 * organizations do not, and a person reads their own memberships in every organization (which
 * is how one without a current organization finds one to switch to).
 */
function actsInOrganization(s: Services, method: string, table: string): boolean {
  if (table === 'organization_members' && (method === 'GET' || method === 'HEAD')) return false;
  return s.schema.get(table)?.columns.has('organization_id') === true;
}

/**
 * Runs a /rest/v1 handler after the Prefer check; errors are shaped for PostgREST clients here,
 * answered (and a 5xx logged by its cause) by the app's one error handler.
 */
async function shaped(c: Context, handle: () => Promise<Response>): Promise<Response> {
  try {
    assertPreferences(c.req.header('prefer'));
    return await handle();
  } catch (err) {
    throw Object.assign(restError(err, c.get('principal').kind === 'anon'), { cause: err });
  }
}

/** /rest/v1: a PostgREST-compatible interface over the schema cache. */
export function restRoutes(s: Services) {
  const app = newRouter();
  app.use('*', requireApiKey(s.tokens), authenticate(s, { required: false }), meter(s));
  const describe = (c: Context) => c.json(restOpenApi(s.schema, s.publicUrl), 200);
  app.get('/', describe);
  // Before /:table: `rpc/<name>` is a function call, and no function is exposed.
  app.on(['GET', 'HEAD', 'POST'], '/rpc/:name', (c) => shaped(c, () => rpc(c, c.req.param('name'))));
  const handlers = { GET: read, HEAD: read, POST: insert, PATCH: update, DELETE: remove } as const;
  app.on(Object.keys(handlers), '/:table', (c) =>
    shaped(c, () => {
      if (actsInOrganization(s, c.req.method, c.req.param('table'))) assertOrganization(c.get('principal'));
      return handlers[c.req.method as keyof typeof handlers](s, c, c.req.param('table'));
    }),
  );
  return app;
}

import type { Context } from 'hono';
import { authenticate, requireApiKey } from '../platform/http/authenticate.ts';
import { meter } from '../platform/http/meter.ts';
import { newRouter } from '../platform/http/openapi.ts';
import { assertOrganization } from '../platform/http/require-organization.ts';
import type { Services } from '../services.ts';
import { restOpenApi } from './openapi.ts';
import { parsePrefer } from './prefer.ts';
import { read } from './read.ts';
import { apiRequest, jsonBody } from './request.ts';
import { type RestResponse, restError, send } from './respond.ts';
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
 * A /rest/v1 request through its stages: read into an ApiRequest, planned and run by read.ts or
 * write.ts, rendered by `send`. Errors are shaped for PostgREST clients here and answered (a 5xx
 * logged by its cause) by the app's one error handler.
 */
async function shaped(c: Context, handle: () => Promise<RestResponse>): Promise<Response> {
  try {
    return send(c, await handle());
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
  app.on(['GET', 'HEAD', 'POST'], '/rpc/:name', (c) =>
    shaped(c, () => {
      parsePrefer(c.req.header('prefer'));
      return rpc(c, c.req.param('name'));
    }),
  );
  app.on(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'], '/:table', (c) =>
    shaped(c, () => {
      const table = c.req.param('table');
      const acts = actsInOrganization(s, c.req.method, table);
      if (acts) assertOrganization(c.get('principal'));
      const req = apiRequest(c, table, acts);
      const body = () => jsonBody(c);
      if (req.method === 'POST') return insert(s, req, body);
      if (req.method === 'PATCH') return update(s, req, body);
      if (req.method === 'DELETE') return remove(s, req);
      return read(s, req);
    }),
  );
  return app;
}

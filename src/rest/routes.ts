import type { Context } from 'hono';
import { errorBody } from '../platform/errors.ts';
import { authenticate, requireApiKey } from '../platform/http/authenticate.ts';
import { meter } from '../platform/http/meter.ts';
import { newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { restOpenApi } from './openapi.ts';
import { read } from './read.ts';
import { restError } from './respond.ts';
import { insert, remove, update } from './write.ts';

/** /rest/v1: a PostgREST-compatible interface over the schema cache. */
export function restRoutes(s: Services) {
  const app = newRouter();
  app.use('*', requireApiKey(s.tokens), authenticate(s, { required: false }), meter(s));
  const describe = (c: Context) => c.json(restOpenApi(s.schema, s.publicUrl), 200);
  app.get('/', describe);
  const handlers = { GET: read, HEAD: read, POST: insert, PATCH: update, DELETE: remove } as const;
  app.on(Object.keys(handlers), '/:table', async (c) => {
    try {
      return await handlers[c.req.method as keyof typeof handlers](s, c, c.req.param('table'));
    } catch (err) {
      const e = restError(err, c.get('principal').kind === 'anon');
      for (const [k, v] of Object.entries(e.headers)) c.header(k, v);
      return c.json(errorBody(e), e.status as 400);
    }
  });
  return app;
}

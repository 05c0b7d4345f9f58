import { errorBody } from '../platform/errors.ts';
import { authenticate, requireApiKey } from '../platform/http/authenticate.ts';
import { meter } from '../platform/http/meter.ts';
import { newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { read } from './read.ts';
import { restError } from './respond.ts';

/** /rest/v1: a PostgREST-compatible interface over the schema cache. Reads for now. */
export function restRoutes(s: Services) {
  const app = newRouter();
  app.use('*', requireApiKey(s.tokens), authenticate(s.tokens, { required: false }), meter(s));
  app.on(['GET', 'HEAD'], '/:table', async (c) => {
    try {
      return await read(s, c, c.req.param('table'));
    } catch (err) {
      const e = restError(err, c.get('principal').kind === 'anon');
      for (const [k, v] of Object.entries(e.headers)) c.header(k, v);
      return c.json(errorBody(e), e.status as 400);
    }
  });
  return app;
}

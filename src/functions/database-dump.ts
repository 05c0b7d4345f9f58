import { createRoute, z } from '@hono/zod-openapi';
import { dumpDatabase } from '../platform/backup/database-dump.ts';
import { AppError } from '../platform/errors.ts';
import { requireService } from '../platform/http/authenticate.ts';
import { errorResponses, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';

const route = createRoute({
  method: 'post',
  path: '/database-dump',
  summary: 'Dump the embedded database into DATA_DIR (the service role: `svc backup`)',
  description:
    'What `svc backup` calls while the service runs: only this process may read the embedded database, so it writes a copy into DATA_DIR/backup-dumps/ and answers the file’s name; the command, on the same machine, puts it in the backup file with the keys and the stored files. The data never leaves in the answer. PostgreSQL: 409 (use pg_dump, docs/operations.md). Everyone else is refused (403).',
  responses: {
    200: jsonResponse(z.object({ file: z.string() }), 'The dump’s name in DATA_DIR/backup-dumps/'),
    ...errorResponses(401, 403, 409),
  },
});

export function databaseDump(s: Services) {
  return newRouter().openapi(route, async (c) => {
    requireService(c.get('principal'));
    if (!s.db.dumpDataDir)
      throw new AppError(
        409,
        'not_embedded',
        'The database is PostgreSQL: back it up with pg_dump (docs/operations.md, “Backups”)',
      );
    return c.json({ file: await dumpDatabase(s.db, s.config.dataDir) }, 200);
  });
}

import type { Context } from 'hono';
import { AppError } from '../platform/errors.ts';
import type { Services } from '../services.ts';
import { explainDbError, fromFilters } from './db-errors.ts';
import { parseRead } from './parse.ts';
import { contentRange, pageOf, readStatus } from './range.ts';
import { preferences, relationOf, SINGLE, send } from './respond.ts';
import { readSql } from './sql.ts';

/** GET and HEAD on a table or view: one statement under the caller's claims, read-only. */
export async function read(s: Services, c: Context, table: string) {
  const rel = relationOf(s.schema, table);
  const params = new URL(c.req.url).searchParams;
  const q = parseRead(params);
  const page = pageOf(q, c.req.header('range'));
  const prefer = preferences(c.req.header('prefer'));
  const counted = ['exact', 'planned', 'estimated'].includes(prefer.get('count') ?? '');
  const sql = readSql(s.schema, rel, q, page, counted);
  const [row] = await s.db
    .asPrincipal(
      c.get('principal'),
      (tx) => tx.query<{ body: string; returned: number; total: number | null }>(sql.text, sql.values),
      { readOnly: true },
    )
    .catch((err) => {
      throw explainDbError(err, rel, fromFilters(q.filters));
    });
  const { body, returned, total } = row as { body: string; returned: number; total: number | null };
  c.header('Content-Range', contentRange(page.offset, returned, total));
  if (c.req.header('accept')?.includes(SINGLE)) {
    if (returned !== 1) {
      throw new AppError(
        406,
        'not_acceptable',
        `The result contains ${returned} rows; a single object needs exactly one`,
        {},
        { code: 'PGRST116', hint: null },
      );
    }
    c.header('Content-Type', `${SINGLE}; charset=utf-8`);
    return send(c, body.slice(1, -1), 200);
  }
  const status = readStatus(page.offset, returned, total);
  if (status === 416) {
    throw new AppError(
      416,
      'range_not_satisfiable',
      `The offset ${page.offset} is past the ${total} rows`,
      {},
      { code: 'PGRST103', hint: null },
    );
  }
  c.header('Content-Type', 'application/json; charset=utf-8');
  return send(c, body, status);
}

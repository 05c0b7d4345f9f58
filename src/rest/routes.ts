import type { Context } from 'hono';
import { AppError, errorBody, toAppError } from '../platform/errors.ts';
import { authenticate, requireApiKey } from '../platform/http/authenticate.ts';
import { meter } from '../platform/http/meter.ts';
import { newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { parseRead } from './parse.ts';
import { contentRange, pageOf, readStatus } from './range.ts';
import type { SchemaCache } from './schema-cache.ts';
import { readSql } from './sql.ts';

const SINGLE = 'application/vnd.pgrst.object+json';

/** Prefer: header preferences, comma-joined as postgrest-js sends them. */
export function preferences(header: string | undefined): Map<string, string> {
  const prefs = new Map<string, string>();
  for (const part of (header ?? '').split(',')) {
    const [k, v] = part.trim().split('=');
    if (k) prefs.set(k, v ?? '');
  }
  return prefs;
}

/**
 * Errors as PostgREST clients expect them: our `{error, message, details}` plus `code` (the
 * PGRST code or SQLSTATE) and `hint`. A permission error is 401 for anonymous callers.
 */
export function restError(err: unknown, anonymous: boolean): AppError {
  const e = toAppError(err);
  const sqlstate = (err as { code?: unknown }).code;
  const code =
    e.extra.code ?? (typeof sqlstate === 'string' && /^[0-9A-Z]{5}$/.test(sqlstate) ? sqlstate : e.code);
  const status = code === '42501' && anonymous ? 401 : e.status;
  return new AppError(status, e.code, e.message, e.details, { hint: null, ...e.extra, code }, e.headers);
}

/** HEAD answers with the headers of GET and no body. */
const send = (c: Context, text: string, status: 200 | 206) =>
  c.req.method === 'HEAD' ? c.body(null, status) : c.body(text, status);

async function read(s: Services, schema: SchemaCache, c: Context, table: string) {
  const rel = schema.get(table);
  if (!rel) {
    throw new AppError(
      404,
      'not_found',
      `No table or view "${table}" in the exposed schema`,
      {},
      { code: '42P01', hint: null },
    );
  }
  const params = new URL(c.req.url).searchParams;
  const q = parseRead(params);
  const page = pageOf(q, c.req.header('range'));
  const prefer = preferences(c.req.header('prefer'));
  const counted = ['exact', 'planned', 'estimated'].includes(prefer.get('count') ?? '');
  const sql = readSql(rel, q, page, counted);
  const [row] = await s.db.asPrincipal(
    c.get('principal'),
    (tx) => tx.query<{ body: string; returned: number; total: number | null }>(sql.text, sql.values),
    {
      readOnly: true,
    },
  );
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

/** /rest/v1: a PostgREST-compatible interface over the schema cache. Reads for now. */
export function restRoutes(s: Services) {
  const app = newRouter();
  app.use('*', requireApiKey(s.tokens), authenticate(s.tokens, { required: false }), meter(s));
  app.on(['GET', 'HEAD'], '/:table', async (c) => {
    try {
      return await read(s, s.schema, c, c.req.param('table'));
    } catch (err) {
      const e = restError(err, c.get('principal').kind === 'anon');
      for (const [k, v] of Object.entries(e.headers)) c.header(k, v);
      return c.json(errorBody(e), e.status as 400);
    }
  });
  return app;
}

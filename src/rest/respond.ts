import type { Context } from 'hono';
import { AppError, toAppError } from '../platform/errors.ts';
import type { Relation, SchemaCache } from './schema-cache.ts';

export const SINGLE = 'application/vnd.pgrst.object+json';

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
 * The preferences this interface honours, with the values it understands. PostgREST's others
 * (timezone, tx, max-affected, params) are not honoured here, so strict handling refuses them.
 */
const HONOURED: Record<string, readonly string[]> = {
  handling: ['strict', 'lenient'],
  return: ['minimal', 'headers-only', 'representation'],
  count: ['exact', 'planned', 'estimated'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
};

/**
 * `Prefer: handling=strict` refuses what would otherwise be ignored (PostgREST's PGRST122);
 * lenient, the default, ignores unknown and unfulfillable preferences.
 */
export function assertPreferences(header: string | undefined): void {
  const prefs = preferences(header);
  if (prefs.get('handling') !== 'strict') return;
  const invalid = (header ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => {
      const [k = '', v = ''] = part.split('=');
      return part !== '' && !(Object.hasOwn(HONOURED, k) && HONOURED[k]?.includes(v));
    });
  if (invalid.length === 0) return;
  throw new AppError(
    400,
    'validation_error',
    'Invalid preferences given with handling=strict',
    { invalid_preferences: invalid },
    { code: 'PGRST122', hint: null },
  );
}

/**
 * Errors as PostgREST clients expect them: our `{error, message, details}` plus `code` (the
 * PGRST code or SQLSTATE) and `hint`. A permission error is 401 for anonymous callers.
 */
export function restError(err: unknown, anonymous: boolean): AppError {
  const e = toAppError(err);
  const sqlstate = (err as { code?: unknown }).code;
  // A SQLSTATE, except our own (SVnnn), which is better known by its name: plan_limit_exceeded.
  const pgCode = typeof sqlstate === 'string' && /^[0-9A-Z]{5}$/.test(sqlstate) && !sqlstate.startsWith('SV');
  const code = e.extra.code ?? (pgCode ? sqlstate : e.code);
  // PostgREST's map: anything the database refused that is not listed is the request's fault.
  if (code === '42501' && anonymous) return signInFirst(e);
  let status = e.status;
  if (status === 500 && pgCode) status = sqlstate === '42P01' ? 404 : 400;
  const message = status !== e.status ? 'The database refused the request' : e.message;
  const error = status !== e.status ? 'validation_error' : e.code;
  return new AppError(status, error, message, e.details, { hint: null, ...e.extra, code }, e.headers);
}

/**
 * PostgREST answers a permission error of the anon role 401 (42501) with a Bearer challenge: the
 * caller is not refused for who they are but for being no one, so the code says to sign in.
 */
function signInFirst(e: AppError): AppError {
  return new AppError(
    401,
    'unauthorized',
    'Sign in first: the anon key alone may not read or change this table; send a user’s access token or an agent JWT as "Authorization: Bearer <token>"',
    {},
    { hint: null, code: '42501' },
    { ...e.headers, 'WWW-Authenticate': 'Bearer' },
  );
}

/** The relation a path names, from the schema cache only. */
export function relationOf(schema: SchemaCache, table: string): Relation {
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
  return rel;
}

/** HEAD (and a write asked for no representation) answers with headers and no body. */
export function send(c: Context, text: string | null, status: 200 | 201 | 206): Response;
export function send(c: Context, text: null, status: 204): Response;
export function send(c: Context, text: string | null, status: 200 | 201 | 204 | 206): Response {
  if (status === 204 || text === null || c.req.method === 'HEAD') return c.body(null, status as 200);
  return c.body(text, status);
}

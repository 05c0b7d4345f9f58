import { AppError, toAppError } from '../platform/errors.ts';
import { CSV, SINGLE } from './accept.ts';

/** A /rest/v1 answer as plain data: the last stage renders it (`render`). */
export type RestResponse = {
  status: 200 | 201 | 204 | 206;
  /** JSON text built by Postgres, or null for no body. */
  body: string | null;
  headers: Record<string, string>;
  /** The body is one object (Accept: application/vnd.pgrst.object+json). */
  single?: boolean;
  /** The body is CSV (Accept: text/csv). */
  csv?: boolean;
};

/** An answer as written: status, header fields (lower-case names) and body. */
export type HttpAnswer = { status: number; headers: Record<string, string>; body: string | null };

const SINGLE_TYPE = `${SINGLE}; charset=utf-8`;
const CSV_TYPE = `${CSV}; charset=utf-8`;
const JSON_TYPE = 'application/json; charset=utf-8';

/** The last stage: content type, and no body for HEAD, 204 or a write's minimal return. */
export function render(r: RestResponse, head: boolean): HttpAnswer {
  const headers: Record<string, string> = {};
  for (const name in r.headers) headers[name.toLowerCase()] = r.headers[name] as string;
  const bodyless = r.status === 204 || r.body === null;
  if (!bodyless) headers['content-type'] = r.single ? SINGLE_TYPE : r.csv ? CSV_TYPE : JSON_TYPE;
  return { status: r.status, headers, body: bodyless || head ? null : r.body };
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
  // PostgREST's own code for a database it cannot reach (PGRST000, 503).
  const code = e.status === 503 ? 'PGRST000' : (e.extra.code ?? (pgCode ? sqlstate : e.code));
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

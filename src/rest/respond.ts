import type { Context } from 'hono';
import { AppError, toAppError } from '../platform/errors.ts';
import { takeFinalHeaders } from '../platform/http/cors.ts';
import { SINGLE } from './request.ts';

/** A /rest/v1 answer as plain data: the last stage renders it (`send`). */
export type RestResponse = {
  status: 200 | 201 | 204 | 206;
  /** JSON text built by Postgres, or null for no body. */
  body: string | null;
  headers: Record<string, string>;
  /** The body is one object (Accept: application/vnd.pgrst.object+json). */
  single?: boolean;
};

/**
 * The last stage: headers, content type, and no body for HEAD, 204 or a write's minimal return.
 *
 * The Response is built from one plain header object that also carries the request id and CORS
 * headers (cors.ts, takeFinalHeaders): @hono/node-server then writes it as it is, where
 * `c.header()` and the middleware's headers each built Headers objects (~25 µs a request,
 * docs/performance.md). Names are in lower case, as a Headers object gives them; they are not
 * sorted as it sorts them (the order means nothing in HTTP, and sorting cost an array a request).
 */
export function send(c: Context, r: RestResponse): Response {
  const final = takeFinalHeaders(c);
  if (!final) return sendWithHono(c, r);
  const fields: Record<string, string> = {};
  for (const [name, value, append] of final.entries) {
    const key = name.toLowerCase();
    const had = fields[key];
    fields[key] = append && had !== undefined ? `${had}, ${value}` : value;
  }
  for (const name in r.headers) fields[name.toLowerCase()] = r.headers[name] as string;
  const bodyless = r.status === 204 || r.body === null;
  if (!bodyless) fields['content-type'] = `${r.single ? SINGLE : 'application/json'}; charset=utf-8`;
  const body = bodyless || c.req.method === 'HEAD' ? null : (r.body as string);
  if (body !== null) fields['content-length'] = String(Buffer.byteLength(body));
  const res = new Response(body, { status: r.status, headers: fields });
  final.claim(res);
  return res;
}

/** The same answer through hono's helpers, where no middleware collected final headers. */
function sendWithHono(c: Context, r: RestResponse): Response {
  for (const [k, v] of Object.entries(r.headers)) c.header(k, v);
  if (r.status === 204 || r.body === null) return c.body(null, r.status);
  c.header('Content-Type', `${r.single ? SINGLE : 'application/json'}; charset=utf-8`);
  return c.req.method === 'HEAD' ? c.body(null, r.status) : c.body(r.body, r.status);
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

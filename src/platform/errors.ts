import { HTTPException } from 'hono/http-exception';

export type ErrorDetails = Record<string, unknown>;

/** An error meant for the caller: it leaves as `{error, message, details}` with its status. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetails = {},
    /** Extra top-level fields the contract names (e.g. `minimum_plan`). */
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const validationError = (
  issues: { path: string; message: string }[],
  message = 'The request is invalid',
) => new AppError(400, 'validation_error', message, { issues });

/** zod's issues as the `details.issues` of a validation_error. */
export const fromZodIssues = (issues: readonly { path: readonly PropertyKey[]; message: string }[]) =>
  validationError(issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })));
export const unauthorized = (message = 'A valid bearer token is required') =>
  new AppError(401, 'unauthorized', message);
export const forbidden = (message = 'You are not allowed to do this') =>
  new AppError(403, 'forbidden', message);
export const notFound = (what = 'resource') => new AppError(404, 'not_found', `No such ${what}`);

/** An agent token whose key was revoked or expired after it was issued. */
export const agentKeyGone = () =>
  new AppError(
    401,
    'unauthorized',
    'The API key behind this token was revoked or has expired; call agent-auth again',
  );

/**
 * A person whose token names no organization (signed up without one, or not switched into one
 * yet): said plainly instead of empty reads and bare 403s, with the ways out.
 */
export const noOrganization = () =>
  new AppError(
    403,
    'no_organization',
    'You are not acting in any organization: create one with organization-create or accept an invitation (functions/v1/invitations), then call organization-switch with its id to get a session that acts in it',
    {
      organization_create: '/functions/v1/organization-create',
      invitations: '/functions/v1/invitations',
      organization_switch: '/functions/v1/organization-switch',
    },
  );

/** Postgres error fields both drivers expose. */
type PgError = { code?: string; message?: string; hint?: string; detail?: string; constraint?: string };

const isPgError = (e: unknown): e is PgError =>
  typeof e === 'object' &&
  e !== null &&
  typeof (e as PgError).code === 'string' &&
  /^[0-9A-Z]{5}$/.test((e as PgError).code ?? '');

/**
 * Postgres errors as the caller should see them. Errors raised on purpose by our SQL use the
 * SQLSTATE class "SV" (SVnnn carries the HTTP status), the error code in HINT and JSON details in
 * DETAIL. Anything else is described by its class, never by its text, so no SQL leaks out.
 */
export function fromPgError(e: PgError): AppError {
  const code = e.code ?? '';
  if (code.startsWith('SV')) {
    let details: ErrorDetails = {};
    try {
      details = e.detail ? JSON.parse(e.detail) : {};
    } catch {}
    return new AppError(
      Number(code.slice(2)) || 400,
      e.hint || 'error',
      e.message ?? 'Request refused',
      details,
    );
  }
  switch (code) {
    case '23505':
      return new AppError(409, 'duplicate', 'A record with the same unique value already exists', {
        constraint: e.constraint,
      });
    case '23503':
      return new AppError(409, 'conflict', 'The record refers to, or is referred to by, another record', {
        constraint: e.constraint,
      });
    case '42501':
      return forbidden('You are not allowed to do this');
    case '23502':
    case '23514':
    case '22P02':
    case '22001':
    case '22003':
    case '22007':
    case '22008':
    case '22023':
    case 'P0001':
      return new AppError(400, 'validation_error', 'A value is missing, malformed or out of range', {
        issues: [],
        constraint: e.constraint,
      });
    case '25006':
      return new AppError(405, 'read_only', 'This request may not change data');
    default:
      return internalError();
  }
}

export const internalError = () => new AppError(500, 'internal_error', 'Something went wrong on our side');

/** Any thrown value as an AppError; unknown errors become 500 with nothing of their text. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new AppError(413, 'payload_too_large', 'The request body is too large');
    if (err.status === 415) {
      return new AppError(
        415,
        'unsupported_media_type',
        'Send the body as JSON with Content-Type: application/json',
      );
    }
    if (err.status === 400 && /json/i.test(err.message)) {
      return validationError(
        [{ path: '', message: 'The body is not valid JSON' }],
        'Malformed JSON in request body',
      );
    }
    if (err.status === 400) return validationError([{ path: '', message: err.message }]);
    return new AppError(
      err.status,
      err.status === 401 ? 'unauthorized' : 'error',
      err.message || 'Request refused',
    );
  }
  if (isPgError(err)) return fromPgError(err);
  return internalError();
}

export type ErrorBody = { error: string; message: string; details: ErrorDetails } & Record<string, unknown>;

export function errorBody(e: AppError): ErrorBody {
  return { error: e.code, message: e.message, details: e.details, ...e.extra };
}

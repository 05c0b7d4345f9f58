import { HTTPException } from 'hono/http-exception';
import { databaseUnavailable } from './db/unavailable.ts';
import { checkSentence, requiredSentence, uniqueSentence } from './messages.ts';

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

/** One refused value is the message itself; several are counted, each told in `details.issues`. */
export const validationError = (
  issues: { path: string; message: string }[],
  message = issues.length === 1 ? (issues[0]?.message ?? '') : `${issues.length} values need correcting`,
) => new AppError(400, 'validation_error', message || 'The request is invalid', { issues });

/** zod's issues as the `details.issues` of a validation_error. */
export const fromZodIssues = (issues: readonly { path: readonly PropertyKey[]; message: string }[]) =>
  validationError(issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })));
export const unauthorized = (message = 'A valid bearer token is required') =>
  new AppError(401, 'unauthorized', message);
export const forbidden = (message = 'You are not allowed to do this', details: ErrorDetails = {}) =>
  new AppError(403, 'forbidden', message, details);
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

/** Postgres error fields both drivers expose (node-postgres and PGlite name them alike). */
export type PgError = {
  code?: string;
  message?: string;
  hint?: string;
  detail?: string;
  constraint?: string;
  column?: string;
  table?: string;
};

const isPgError = (e: unknown): e is PgError =>
  typeof e === 'object' &&
  e !== null &&
  typeof (e as PgError).code === 'string' &&
  /^[0-9A-Z]{5}$/.test((e as PgError).code ?? '');

/** A hint for a value PostgreSQL could not read as `type` (from its message, when it names one). */
export function typeHint(type: string | undefined): string {
  if (!type) return 'Send a valid value';
  if (type === 'uuid') return 'Send a UUID, e.g. 123e4567-e89b-12d3-a456-426614174000';
  if (type === 'boolean') return 'Send true or false';
  if (/^(smallint|integer|bigint|numeric|real|double precision)$/.test(type))
    return `Send a number that fits ${type}`;
  if (/^(date|time|timestamp)/.test(type))
    return 'Send an ISO 8601 date or timestamp, e.g. 2024-05-01 or 2024-05-01T12:00:00Z';
  if (/^jsonb?$/.test(type)) return 'Send valid JSON';
  return `Send a valid ${type}`;
}

/** The type a data error's message names: `invalid input syntax for type uuid: "x"`. */
export const typeInMessage = (message = '') =>
  /for type ([a-z][a-z0-9 ]*?)(?::|$)/.exec(message)?.[1] ??
  (/^date\/time field/.test(message) ? 'timestamp' : undefined);

/** The columns a unique violation names (`Key (organization_id, email)=(…)`), never its values. */
export const keyColumns = (detail = '') =>
  (/^Key \(([^)]*)\)=/.exec(detail)?.[1] ?? '')
    .split(',')
    .map((c) => c.trim().replace(/^"|"$/g, ''))
    .filter(Boolean);

const invalid = (message: string, path: string, hint: string, extra: ErrorDetails = {}) =>
  new AppError(400, 'validation_error', message, { issues: [{ path, message }], ...extra }, { hint });

/**
 * Postgres errors as the caller should see them. Errors raised on purpose by our SQL use the
 * SQLSTATE class "SV" (SVnnn carries the HTTP status), the error code in HINT and JSON details in
 * DETAIL. Data errors say which column and what was wrong, from the error's own fields; the
 * rest is described by its class. Never the statement's text, and never DETAIL's "Failing row
 * contains (…)" or a key's values: they can hold columns the caller may not read.
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
    case '23505': {
      // The sentence names the field a person chose; `columns` keeps the whole key for machines.
      const columns = keyColumns(e.detail);
      const sentence = uniqueSentence(e.constraint);
      const named = columns.length ? ` (${columns.join(', ')})` : '';
      const message = sentence?.message ?? `A record with the same unique value${named} already exists`;
      const column = sentence?.column ?? columns.filter((c) => c !== 'organization_id').at(-1);
      return new AppError(
        409,
        'duplicate',
        message,
        {
          constraint: e.constraint,
          columns,
          ...(column ? { column, issues: [{ path: column, message }] } : {}),
        },
        {
          hint: columns.length
            ? `Use another value, or update that record (upsert with on_conflict=${columns.join(',')})`
            : 'Use another value, or update the existing record',
        },
      );
    }
    case '23503':
      return new AppError(409, 'conflict', 'The record refers to, or is referred to by, another record', {
        constraint: e.constraint,
      });
    case '42501':
      return forbidden('You are not allowed to do this');
    case '23502': {
      const col = e.column ?? '';
      return invalid(
        col ? requiredSentence(col) : 'A required value is missing',
        col,
        col
          ? `Give "${col}" a value in every row, or leave it out where it has a default`
          : 'Give every required column a value',
        { constraint: e.constraint, ...(col ? { column: col } : {}) },
      );
    }
    case '23514': {
      const sentence = checkSentence(e.constraint);
      const column = sentence?.column ?? e.column ?? '';
      return invalid(
        sentence?.message ?? `A value breaks the rule "${e.constraint ?? 'check'}"`,
        column,
        'Change the value so it meets the rule',
        { constraint: e.constraint, ...(column ? { column } : {}) },
      );
    }
    // PostgreSQL's message for these names the type and quotes the value the request sent.
    case '22P02':
    case '22007':
    case '22008':
    case '22003':
    case '22001':
      return invalid(
        e.message ?? 'A value is malformed or out of range',
        e.column ?? '',
        typeHint(typeInMessage(e.message)),
      );
    case '42703':
      return invalid(e.message ?? 'No such column', '', 'Check the column names against the table');
    case '42P10':
      return invalid(
        'No unique key of the table matches the on_conflict columns',
        'on_conflict',
        'Name all the columns of one unique key in on_conflict',
      );
    case '54001':
      return invalid('A value is nested too deeply to be read', '', 'Send values nested less deeply');
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

/** Seconds a caller is asked to wait while the database is out of reach (a restart takes ~1–2). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * The database is out of reach (stopped, restarting, the connection lost): the request is not at
 * fault and may be sent again. Meta and Shopify retry a webhook delivery on any non-2xx.
 */
export const serviceUnavailable = (
  message = 'The service is briefly unavailable; try again in a few seconds',
  retryAfterSeconds = UNAVAILABLE_RETRY_AFTER_SECONDS,
) => new AppError(503, 'service_unavailable', message, {}, {}, { 'Retry-After': String(retryAfterSeconds) });

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
  if (databaseUnavailable(err)) return serviceUnavailable();
  if (isPgError(err)) return fromPgError(err);
  return internalError();
}

export type ErrorBody = { error: string; message: string; details: ErrorDetails } & Record<string, unknown>;

export function errorBody(e: AppError): ErrorBody {
  return { error: e.code, message: e.message, details: e.details, ...e.extra };
}

// The catalogue: each error the domain, the MCP server and the functions refuse with, named once
// with its status and code (docs/decisions.md, "Errors are named"). Throw these; the one mapper
// (app.ts) renders them.

/** One invalid field: `path` names it, `message` says what to send instead. */
export const invalidField = (path: string, message: string, summary?: string) =>
  validationError([{ path, message }], summary);

/** A request body past the surface's limit (the connection is closed after the answer). */
export const payloadTooLarge = (limit: number) =>
  new AppError(413, 'payload_too_large', `The request body is larger than ${limit} bytes`, {
    limit_bytes: limit,
  });

/** A record with the same unique value exists; `details` says which (never another tenant's). */
export const alreadyExists = (message: string, details: ErrorDetails = {}) =>
  new AppError(409, 'duplicate', message, details);

/** A person already on the organization's roster. */
export const alreadyMember = (email: string) =>
  new AppError(409, 'already_member', 'This email already belongs to a member of the organization', {
    email,
  });

/** An agent's token lacks the scope a call needs; `message` says which remedy applies. */
export const insufficientScope = (message: string, details: ErrorDetails) =>
  new AppError(403, 'insufficient_scope', message, details);

export const invalidApiKey = () => new AppError(401, 'invalid_api_key', 'The API key is not valid');
export const apiKeyRevoked = () =>
  new AppError(401, 'api_key_revoked', 'This API key has been revoked; ask an owner or admin for a new one');
export const apiKeyExpired = () =>
  new AppError(401, 'api_key_expired', 'This API key has expired; ask an owner or admin for a new one');

/** A plan name the service does not have. */
export const unknownPlan = (plan: string, known: readonly string[]) =>
  new AppError(400, 'validation_error', `Unknown plan "${plan}"`, {
    issues: [{ path: 'plan', message: `must be one of ${known.join(', ')}` }],
  });

/** A method the path does not answer; `Allow` lists those it does. */
export const methodNotAllowed = (allowed: string[], message: string) =>
  new AppError(
    405,
    'method_not_allowed',
    message,
    { allowed_methods: allowed },
    {},
    {
      Allow: allowed.join(', '),
    },
  );

/** `e` with `headers` added (a refusal's challenge); headers `e` brings itself win. */
export const withHeaders = (e: AppError, headers: Record<string, string>) =>
  new AppError(e.status, e.code, e.message, e.details, e.extra, { ...headers, ...e.headers });

/** The provider says the caller's token cannot act for the account it names (a connect). */
export const accountNotVerified = (message: string, details: ErrorDetails) =>
  new AppError(403, 'account_not_verified', message, details);

/** The provider could not be asked, or failed on its side: nothing was done; try again later. */
export const providerFailed = (message: string, details: ErrorDetails) =>
  new AppError(502, 'provider_error', message, details);

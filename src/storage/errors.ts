import { AppError } from '../platform/errors.ts';

// Refusals of /storage/v1. The body is ours ({error, message, details}, spec section 7) plus the
// two fields @supabase/storage-js reads from Supabase's storage API: `statusCode` (the status as
// text) and `code` (its error code: NoSuchKey, AccessDenied, …; StorageApiError.code, which
// `exists()` branches on). The HTTP status is the real one (Supabase answers 400 for most and
// puts the real status in `statusCode`; storage-js works with either). docs/storage.md.

const storageError = (status: number, error: string, code: string, message: string, details = {}) =>
  new AppError(status, error, message, details, { statusCode: String(status), code });

export const noSuchBucket = (bucket: string) =>
  storageError(404, 'not_found', 'NoSuchBucket', 'Bucket not found', { bucket });
/** Also the answer for another organization's objects: they are never said to exist. */
export const noSuchKey = () => storageError(404, 'not_found', 'NoSuchKey', 'Object not found');
export const outsideOwnFolder = (org: string) =>
  storageError(
    403,
    'forbidden',
    'AccessDenied',
    `Objects can only be written under your organization's folder: the path must start with "${org}/"`,
  );
export const invalidKey = (message: string) => storageError(400, 'validation_error', 'InvalidKey', message);
export const keyExists = () =>
  storageError(
    409,
    'duplicate',
    'KeyAlreadyExists',
    'The resource already exists; upload with x-upsert: true to replace it',
  );
/** No file in the body (or a multipart body that does not parse). */
export const noContent = (cause?: unknown) =>
  storageError(
    400,
    'validation_error',
    'InvalidRequest',
    cause ? 'The multipart body does not parse, or carries no file' : 'No content provided',
  );
export const invalidMimeType = (allowed: string[]) =>
  storageError(
    415,
    'unsupported_media_type',
    'InvalidMimeType',
    `The file is not one of ${allowed.join(', ')} (judged by its content, not its name or Content-Type)`,
    { allowed_mime_types: allowed },
  );
export const entityTooLarge = (limit: number, kind?: string) =>
  storageError(
    413,
    'payload_too_large',
    'EntityTooLarge',
    `The object exceeded ${limit} bytes, the limit${kind ? ` for ${kind}s` : ''}`,
    {
      limit_bytes: limit,
    },
  );
export const invalidSignature = () =>
  storageError(
    401,
    'unauthorized',
    'InvalidSignature',
    'The signed URL is invalid: its token is malformed, forged or for another object',
  );
export const expiredSignature = () =>
  storageError(401, 'token_expired', 'ExpiredToken', 'The signed URL has expired');

/** Supabase's code for a refusal raised outside this surface (authentication, rate limits, validation). */
const CODE_OF_STATUS: Record<number, string> = {
  400: 'InvalidRequest',
  401: 'InvalidJWT',
  403: 'AccessDenied',
  404: 'NoSuchKey',
  413: 'EntityTooLarge',
  429: 'SlowDown',
};

/** The storage-js fields of any error answered under /storage/v1 (app.ts adds them to the body). */
export const storageErrorFields = (e: AppError) => ({
  statusCode: String(e.status),
  code: typeof e.extra.code === 'string' ? e.extra.code : (CODE_OF_STATUS[e.status] ?? 'InternalError'),
});

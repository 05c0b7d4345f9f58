import { z } from '@hono/zod-openapi';
import { MAX_PASSWORD_BYTES } from './password.ts';

export const Email = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ message: 'must be a valid email address' }))
  .pipe(z.string().max(320));

// Length rules are checked in the handler so a short password gets GoTrue's weak_password answer.
export const Password = z
  .string()
  .refine((p) => Buffer.byteLength(p) <= MAX_PASSWORD_BYTES, `must be at most ${MAX_PASSWORD_BYTES} bytes`);

/** user_metadata travels in every access token, so it stays small enough for an HTTP header. */
export const MAX_METADATA_BYTES = 4096;
export const fitsInToken = (v: unknown) => Buffer.byteLength(JSON.stringify(v)) <= MAX_METADATA_BYTES;
const metadataMessage = `must be at most ${MAX_METADATA_BYTES} bytes as JSON`;

export const UserMetadata = z.record(z.string(), z.unknown()).refine(fitsInToken, metadataMessage);

export const UserSchema = z
  .object({
    id: z.uuid(),
    aud: z.string(),
    role: z.string(),
    email: z.string(),
    email_confirmed_at: z.string().nullable(),
    phone: z.string(),
    confirmed_at: z.string().nullable(),
    last_sign_in_at: z.string().nullable(),
    app_metadata: z.record(z.string(), z.unknown()),
    user_metadata: z.record(z.string(), z.unknown()),
    identities: z.array(z.unknown()),
    created_at: z.string(),
    updated_at: z.string(),
    is_anonymous: z.boolean(),
  })
  .openapi('User');

export const SessionSchema = z
  .object({
    access_token: z.string(),
    token_type: z.literal('bearer'),
    expires_in: z.number().int(),
    expires_at: z.number().int(),
    refresh_token: z.string(),
    user: UserSchema,
  })
  .openapi('Session');

import { createHmac, timingSafeEqual } from 'node:crypto';
import { SOCIAL_MEDIA_BUCKET } from './media-bucket.ts';

// Tokens of signed URLs (`/object/sign/<bucket>/<path>?token=…`): whoever holds the URL may
// download that one object until it expires, without a bearer token (an <img src>, the Graph API
// fetching a post's media). A token is `base64url(payload).base64url(HMAC-SHA256(payload))`, the
// payload `{"u": "<bucket>/<path>", "e": <expiry, unix seconds>}`, keyed by a key derived from the
// secrets key (src/platform/secrets.ts), which every process of a deployment shares. Supabase
// signs a JWT with the project's secret; the client never reads the token, so its form is ours.

type Payload = { u: string; e: number };

/** What the signing key is derived for (Secrets.derive): one key for every signed URL. */
export const SIGNED_URL_PURPOSE = 'storage-signed-url';

const mac = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest();

export function signObjectUrl(key: Buffer, objectKey: string, expiresAt: Date): string {
  const body = Buffer.from(
    JSON.stringify({ u: objectKey, e: Math.floor(expiresAt.getTime() / 1000) }),
  ).toString('base64url');
  return `${body}.${mac(key, body).toString('base64url')}`;
}

/** Whether `token` was signed with `key` for `objectKey`, and if so whether it has expired at `now`. */
export function checkObjectUrl(
  key: Buffer,
  token: string,
  objectKey: string,
  now: Date,
): 'valid' | 'invalid' | 'expired' {
  const [body, signature, ...rest] = token.split('.');
  if (!body || !signature || rest.length) return 'invalid';
  const given = Buffer.from(signature, 'base64url');
  // One spelling only, the one issued: Node's decoder also takes base64's `+`, `/` and `=`, and
  // ignores the spare bits of the last character, so several strings decode to one signature.
  // A token that is not the canonical base64url of its own bytes was not issued here.
  if (given.toString('base64url') !== signature) return 'invalid';
  const expected = mac(key, body);
  // Constant time: how much of a forged signature matched must not show in the answer's timing.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  let payload: Payload;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
  } catch {
    return 'invalid';
  }
  if (payload.u !== objectKey || typeof payload.e !== 'number') return 'invalid';
  return payload.e * 1000 <= now.getTime() ? 'expired' : 'valid';
}

export type SignedUrlDeps = {
  secrets: { derive(purpose: string): Buffer };
  publicUrl: string;
  now: () => Date;
};

/**
 * The full signed URL of one object of the bucket (`path` inside it), valid for `expiresInSeconds`:
 * what a post's reader shows, and what Meta's servers fetch when the publisher posts the media.
 */
export function signedMediaUrl(deps: SignedUrlDeps, path: string, expiresInSeconds: number): string {
  const key = `${SOCIAL_MEDIA_BUCKET}/${path}`;
  const token = signObjectUrl(
    deps.secrets.derive(SIGNED_URL_PURPOSE),
    key,
    new Date(deps.now().getTime() + expiresInSeconds * 1000),
  );
  return `${deps.publicUrl}/storage/v1/object/sign/${key}?token=${token}`;
}

/** signedMediaUrl bound to a deployment's secrets and address: the jobs' `mediaUrl`. */
export const mediaUrlSigner =
  (deps: SignedUrlDeps) =>
  (path: string, expiresInSeconds: number): string =>
    signedMediaUrl(deps, path, expiresInSeconds);

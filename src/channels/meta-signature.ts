import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

// Meta's webhook signature: `X-Hub-Signature-256: sha256=<hex>`, the HMAC-SHA256 of the raw
// request body keyed with the app secret. Takes the bytes exactly as received (never a
// re-serialized JSON, which differs in spacing and escapes) and the header; gives a yes or no.

const HEADER = /^sha256=([0-9a-f]{64})$/i;

/** Whether `header` signs `body` with `appSecret`. Constant time once the header is well formed. */
export function verifyMetaSignature(
  body: Uint8Array,
  header: string | undefined,
  appSecret: string,
): boolean {
  const m = header ? HEADER.exec(header.trim()) : null;
  if (!m) return false;
  const given = Buffer.from((m[1] as string).toLowerCase(), 'hex');
  const expected = createHmac('sha256', appSecret).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The header value Meta would send for `body` (tests, the dev tools). */
export const metaSignature = (body: Uint8Array | string, appSecret: string) =>
  `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;

/** Meta sends no delivery id: the SHA-256 of the raw body is the dedupe key (a redelivery is byte-identical). */
export const bodyDigest = (body: Uint8Array) => createHash('sha256').update(body).digest('hex');

/** Compares two secrets in constant time (the verify token of the handshake). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

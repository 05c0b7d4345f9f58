import { createHmac, timingSafeEqual } from 'node:crypto';

// Shopify's webhook signature: `X-Shopify-Hmac-Sha256: <base64>`, the HMAC-SHA256 of the raw
// request body keyed with the app's client secret (the shop's connected-account webhook_secret).
// Takes the bytes exactly as received and the header; gives a yes or no.

const BASE64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;

/** Whether `header` signs `body` with `secret`. Constant time once the header is well formed. */
export function verifyShopifySignature(
  body: Uint8Array,
  header: string | undefined,
  secret: string,
): boolean {
  const value = header?.trim();
  if (!value || !BASE64_SHA256.test(value)) return false;
  const given = Buffer.from(value, 'base64');
  const expected = createHmac('sha256', secret).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The header value Shopify would send for `body` (tests, the benchmark). */
export const shopifySignature = (body: Uint8Array | string, secret: string) =>
  createHmac('sha256', secret).update(body).digest('base64');

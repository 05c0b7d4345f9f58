import type { Context } from 'hono';
import { AppError } from '../platform/errors.ts';
import { addressKey } from '../platform/http/client-ip.ts';
import { hitEach } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';

// What every webhook receiver does alike (docs/webhooks.md "The pattern"): the per-address limit
// and reading the verified bytes as JSON text.

/** RATE_LIMIT_WEBHOOK_PER_MINUTE deliveries a minute from one address, on every receiver together. */
export const limitWebhooks = (s: Services) => (c: Context) =>
  hitEach([[s.limits.webhookPerIp, addressKey(c.get('clientIp')), 'webhook deliveries from this address']]);

/** The body as UTF-8 text and its JSON, or 400 when it is neither. */
export function readJson(raw: Uint8Array): { text: string; json: unknown } {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    return { text, json: JSON.parse(text) };
  } catch {
    throw new AppError(400, 'validation_error', 'The body is not JSON');
  }
}

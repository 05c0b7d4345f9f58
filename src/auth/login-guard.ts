import { addressKey } from '../platform/http/client-ip.ts';
import { rateLimited } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';
import { normalizeEmail } from './users.ts';

/**
 * The brute-force guard of password sign-in (docs/decisions.md, "Sign-in lockout by account and
 * address"). Three counters, each counted before the password is checked, so parallel guesses
 * cannot slip past a lock, and a locked caller is refused even the right password:
 * - attempts from one client address (LOGIN_MAX_PER_IP), whatever the account;
 * - failures on one account from one address (LOGIN_MAX_FAILURES_PER_EMAIL_AND_IP): a stranger
 *   guessing from one address locks that address out of the account, never the owner elsewhere
 *   (GoTrue limits by address too);
 * - failures on one account from all addresses (LOGIN_MAX_FAILURES_PER_EMAIL), higher and longer:
 *   the ceiling on guessing spread over many addresses.
 * An attempt one counter refuses is not counted by the ones after it: it checked no password, so
 * a stranger's locked-out address cannot spend the account's ceiling.
 */
export async function countLoginAttempt(s: Services, email: string, ip: string): Promise<void> {
  const perIp = await s.limits.loginPerIp.hit(addressKey(ip));
  if (!perIp.allowed) throw rateLimited(perIp.retryAfterSeconds, 'sign-in attempts from this address');
  const emailKey = normalizeEmail(email);
  const perPair = await s.limits.loginFailuresPerEmailAndIp.hit(pairKey(emailKey, ip));
  if (!perPair.allowed)
    throw rateLimited(
      perPair.retryAfterSeconds,
      'failed sign-in attempts for this account from this address',
    );
  const perEmail = await s.limits.loginFailuresPerEmail.hit(emailKey);
  if (!perEmail.allowed)
    throw rateLimited(perEmail.retryAfterSeconds, 'failed sign-in attempts for this account');
}

/** Whoever proved they hold the account (a password, a recovery mail) may sign in again at once. */
export async function clearLoginFailures(s: Services, email: string, ip: string): Promise<void> {
  const emailKey = normalizeEmail(email);
  await Promise.all([
    s.limits.loginFailuresPerEmail.reset(emailKey),
    s.limits.loginFailuresPerEmailAndIp.reset(pairKey(emailKey, ip)),
  ]);
}

/** One account's failures from one address (an IPv6 address's /64, as every per-address limit). */
const pairKey = (emailKey: string, ip: string) => `${emailKey} ${addressKey(ip)}`;

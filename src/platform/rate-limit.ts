import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from './errors.ts';

export type LimitRule = { points: number; durationSeconds: number };
export type LimitResult = { allowed: boolean; retryAfterSeconds: number; remaining: number };

/** A fixed-window counter per key. Memory now; the same interface fronts Redis when shared. */
export interface Limiter {
  /** Counts one (or `points`) against the key and says whether the caller is still within the rule. */
  hit(key: string, points?: number): Promise<LimitResult>;
  reset(key: string): Promise<void>;
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export function memoryLimiter(name: string, rule: LimitRule): Limiter {
  const rl = new RateLimiterMemory({ keyPrefix: name, points: rule.points, duration: rule.durationSeconds });
  return {
    async hit(key, points = 1) {
      try {
        const res = await rl.consume(key, points);
        return { allowed: true, retryAfterSeconds: 0, remaining: res.remainingPoints };
      } catch (err) {
        if (err instanceof RateLimiterRes)
          return { allowed: false, retryAfterSeconds: seconds(err.msBeforeNext), remaining: 0 };
        throw err;
      }
    },
    async reset(key) {
      await rl.delete(key);
    },
  };
}

export function rateLimited(retryAfterSeconds: number, what = 'requests'): AppError {
  return new AppError(
    429,
    'rate_limit_exceeded',
    `Too many ${what}; retry after ${retryAfterSeconds} seconds`,
    { retry_after_seconds: retryAfterSeconds },
    {},
    { 'Retry-After': String(retryAfterSeconds) },
  );
}

import type { Redis } from 'ioredis';
import { AppError } from './errors.ts';

export type LimitRule = { points: number; durationSeconds: number };
export type LimitResult = {
  allowed: boolean;
  retryAfterSeconds: number;
  remaining: number;
  consumed: number;
};

/** A fixed-window counter per key, in memory or in Redis (shared by every process). */
export interface Limiter {
  /** Counts one (or `points`) against the key and says whether the caller is still within the rule. */
  hit(key: string, points?: number): Promise<LimitResult>;
  /** `hit` without a promise: only a counter in this process's memory has it. */
  hitNow?(key: string, points?: number): LimitResult;
  /** How much of the window the key has used, without counting. */
  used(key: string): Promise<number>;
  reset(key: string): Promise<void>;
}

/** Where counters live: this process, or a Redis that several processes share. */
export type LimitStore = { redis?: Redis; prefix: string };

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export function createLimiter(store: LimitStore, name: string, rule: LimitRule): Limiter {
  if (!store.redis) return memoryLimiter(rule);
  const opts = {
    keyPrefix: `${store.prefix}:rl:${name}`,
    points: rule.points,
    duration: rule.durationSeconds,
  };
  // If Redis is unreachable, counting falls back to this process rather than refusing everyone.
  // The package (some 40 files) is loaded only with Redis, not by every start.
  const redis = store.redis;
  const loaded = import('rate-limiter-flexible').then((m) => ({
    RateLimiterRes: m.RateLimiterRes,
    rl: new m.RateLimiterRedis({
      ...opts,
      storeClient: redis,
      insuranceLimiter: new m.RateLimiterMemory(opts),
    }),
  }));
  return {
    async hit(key, points = 1) {
      const { rl, RateLimiterRes } = await loaded;
      try {
        const res = await rl.consume(key, points);
        return {
          allowed: true,
          retryAfterSeconds: 0,
          remaining: res.remainingPoints,
          consumed: res.consumedPoints,
        };
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        return {
          allowed: false,
          retryAfterSeconds: seconds(err.msBeforeNext),
          remaining: 0,
          consumed: err.consumedPoints,
        };
      }
    },
    async used(key) {
      return (await (await loaded).rl.get(key))?.consumedPoints ?? 0;
    },
    async reset(key) {
      await (await loaded).rl.delete(key);
    },
  };
}

/** The same limiter, calling `refused` each time a hit is not allowed (a metric counts them). */
export function countRefusals(limiter: Limiter, refused: () => void): Limiter {
  const { hitNow } = limiter;
  return {
    async hit(key, points) {
      const r = await limiter.hit(key, points);
      if (!r.allowed) refused();
      return r;
    },
    hitNow:
      hitNow &&
      ((key, points) => {
        const r = hitNow(key, points);
        if (!r.allowed) refused();
        return r;
      }),
    used: (key) => limiter.used(key),
    reset: (key) => limiter.reset(key),
  };
}

/**
 * The same fixed windows in this process's memory, counted synchronously: every metered request
 * hits two of them (docs/performance.md), and a Map entry per key is all a window needs. Windows
 * past their end are swept at most once per window length, so idle keys do not pile up.
 */
function memoryLimiter(rule: LimitRule): Limiter {
  const windowMs = rule.durationSeconds * 1000;
  const windows = new Map<string, { count: number; endsAt: number }>();
  let sweepAt = 0;
  const current = (key: string, now: number) => {
    const w = windows.get(key);
    return w !== undefined && w.endsAt > now ? w : undefined;
  };
  const hitNow = (key: string, points = 1): LimitResult => {
    const now = Date.now();
    if (now >= sweepAt) {
      for (const [k, w] of windows) if (w.endsAt <= now) windows.delete(k);
      sweepAt = now + windowMs;
    }
    let w = current(key, now);
    if (w === undefined) {
      w = { count: 0, endsAt: now + windowMs };
      windows.set(key, w);
    }
    w.count += points;
    const allowed = w.count <= rule.points;
    return {
      allowed,
      retryAfterSeconds: allowed ? 0 : seconds(w.endsAt - now),
      remaining: Math.max(0, rule.points - w.count),
      consumed: w.count,
    };
  };
  return {
    hit: (key, points) => Promise.resolve(hitNow(key, points)),
    hitNow,
    used: async (key) => current(key, Date.now())?.count ?? 0,
    reset: async (key) => {
      windows.delete(key);
    },
  };
}

/**
 * Counts one against each `[limiter, key, what]` in order and throws 429 at the first that is
 * spent; the ones after it are not counted (those before it are: a refused attempt still costs).
 */
export async function hitEach(rules: readonly (readonly [Limiter, string, string])[]): Promise<void> {
  for (const [limiter, key, what] of rules) {
    const r = await limiter.hit(key);
    if (!r.allowed) throw rateLimited(r.retryAfterSeconds, what);
  }
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

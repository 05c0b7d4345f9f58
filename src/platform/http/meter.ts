import type { Context, MiddlewareHandler } from 'hono';
import { claimedOrganization, type Principal } from '../db/database.ts';
import { AppError } from '../errors.ts';
import type { Tokens } from '../jwt.ts';
import type { Metrics } from '../metrics/metrics.ts';
import { perObject } from '../per-object.ts';
import { type Limiter, type LimitResult, rateLimited } from '../rate-limit.ts';
import { bearerToken, principalFromClaims } from './authenticate.ts';
import type { AppEnv } from './env.ts';

/** An organization's plan as the daily quota reads it. */
type QuotaPlan = { limits: { api_calls_per_day: number | null } };

/**
 * What metering takes: the routes pass their Services (src/services.ts), which has all of it; the
 * plans are the cache of src/domain/plan-cache.ts (`cached` answers without a promise, undefined
 * when it would need one).
 */
export type MeterDeps = {
  limits: { standard: Limiter; bulk: Limiter; apiCallsPerDay: Limiter };
  plans: {
    forOrganization(organizationId: string): Promise<QuotaPlan | null>;
    cached(organizationId: string): QuotaPlan | null | undefined;
  };
  now: () => Date;
  metrics: Pick<Metrics, 'refusals'>;
  tokens: Pick<Tokens, 'verify'>;
};

const nextUtcMidnight = (now: Date) =>
  new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));

const secondsToUtcMidnight = (now: Date) =>
  Math.max(1, Math.ceil((nextUtcMidnight(now).getTime() - now.getTime()) / 1000));

/** A wait as a person reads it: "7 hours and 42 minutes", "5 minutes", "less than a minute". */
export function timeLeft(seconds: number): string {
  if (seconds < 60) return 'less than a minute';
  const minutes = Math.ceil(seconds / 60); // never "0 minutes" while some are left
  const [h, m] = [Math.floor(minutes / 60), minutes % 60];
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (!h) return unit(m, 'minute');
  return m ? `${unit(h, 'hour')} and ${unit(m, 'minute')}` : unit(h, 'hour');
}

const utcDay = (now: Date) => now.toISOString().slice(0, 10);

/** A write carrying more than one row counts as a bulk operation too (spec section 8). */
export const isManyRows = (body: unknown) => Array.isArray(body) && body.length > 1;

async function carriesManyRows(c: Context): Promise<boolean> {
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return false;
  if (!c.req.header('content-type')?.includes('application/json')) return false;
  try {
    return isManyRows(await c.req.json());
  } catch {
    return false; // the route's validator reports malformed JSON
  }
}

/** Counts a bulk operation for a caller; the REST interface also calls this for filtered writes. */
export async function meterBulk(s: MeterDeps, principal: Principal): Promise<void> {
  const r = await s.limits.bulk.hit(callerKey(principal));
  if (!r.allowed) throw rateLimited(r.retryAfterSeconds, 'bulk operations');
}

/**
 * The per-minute counter's key, kept with the principal (one per token, per-object.ts): a key
 * built anew on every request is a new string the counter's Map hashes again.
 */
const callerKey = perObject((p: Principal) => `${claimedOrganization(p) ?? '-'}:${String(p.claims.sub)}`);

/**
 * How a call meets the daily quota. `refuse`: past it, 429. `count`: counted, never refused —
 * the reads and actions an owner needs to see the plan and usage and to upgrade, and the
 * account's own state (docs/decisions.md, "What counts against api_calls_per_day").
 */
export type QuotaRule = 'refuse' | 'count';

/**
 * Every authenticated request: the standard per-minute limit per user or agent per organization,
 * the bulk limit for multi-row writes (`manyRows`, asked only for those callers; null for a
 * request that cannot carry rows), and the organization's daily API-call quota. A promise only
 * when something has to be waited for (see meterCall).
 */
export function meterRequest(
  s: MeterDeps,
  principal: Principal,
  manyRows: (() => Promise<boolean>) | null,
  quota: QuotaRule = 'refuse',
): Promise<void> | undefined {
  if (principal.kind !== 'user' && principal.kind !== 'agent') return undefined;
  const counting = meterCall(s, principal, quota);
  if (!manyRows) return counting;
  return (async () => {
    await counting;
    if (await manyRows()) await meterBulk(s, principal);
  })();
}

export const meter =
  (s: MeterDeps, quota: QuotaRule = 'refuse'): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    await meterRequest(s, c.get('principal'), () => carriesManyRows(c), quota);
    await next();
  };

/**
 * One call of a user or agent: the standard per-minute limit and the daily quota. Counted at once
 * when both counters are in this process and the organization's plan is cached (nearly every call
 * of a single process); otherwise a promise.
 */
export function meterCall(
  s: MeterDeps,
  principal: Principal,
  quota: QuotaRule = 'refuse',
): Promise<void> | undefined {
  return meterCallNow(s, principal, quota) ? undefined : meterCallLater(s, principal, quota);
}

async function meterCallLater(s: MeterDeps, principal: Principal, quota: QuotaRule): Promise<void> {
  withinStandard(await s.limits.standard.hit(callerKey(principal)));
  const org = claimedOrganization(principal);
  if (!org) return;
  // One reading of the clock, so the day counted and the wait announced cannot disagree.
  const now = s.now();
  const r = await s.limits.apiCallsPerDay.hit(dayKey(org, now));
  if (quota === 'refuse')
    withinQuota(s, r, (await s.plans.forOrganization(org))?.limits.api_calls_per_day, now);
}

/** meterCallLater without a promise, when it can be; false, with nothing counted, otherwise. */
function meterCallNow(s: MeterDeps, principal: Principal, quota: QuotaRule): boolean {
  const { standard, apiCallsPerDay } = s.limits;
  if (!standard.hitNow || !apiCallsPerDay.hitNow) return false;
  const org = claimedOrganization(principal);
  const plan = org ? s.plans.cached(org) : null;
  if (plan === undefined) return false;
  withinStandard(standard.hitNow(callerKey(principal)));
  if (!org) return true;
  const now = s.now();
  const r = apiCallsPerDay.hitNow(dayKey(org, now));
  if (quota === 'refuse') withinQuota(s, r, plan?.limits.api_calls_per_day, now);
  return true;
}

/** The daily counter's key: the organization and the UTC day, kept for the day (as callerKey). */
const dayKeys = new Map<string, string>();
let dayKeysOf = Number.NaN;
const DAY_MS = 24 * 3600 * 1000;
const dayKey = (organizationId: string, now: Date) => {
  const day = Math.floor(now.getTime() / DAY_MS);
  if (day !== dayKeysOf || dayKeys.size >= 10_000) {
    dayKeys.clear();
    dayKeysOf = day;
  }
  let key = dayKeys.get(organizationId);
  if (key === undefined) {
    key = `${organizationId}:${utcDay(now)}`;
    dayKeys.set(organizationId, key);
  }
  return key;
};

function withinStandard(r: LimitResult): void {
  if (!r.allowed) throw rateLimited(r.retryAfterSeconds);
}

function withinQuota(s: MeterDeps, r: LimitResult, limit: number | null | undefined, now: Date): void {
  if (limit === null || limit === undefined || r.consumed <= limit) return;
  s.metrics.refusals.inc({ limit: 'api-calls-per-day' });
  const wait = secondsToUtcMidnight(now);
  throw new AppError(
    429,
    'quota_exceeded',
    `The plan's ${limit} API calls per day are used up; the quota resets at midnight UTC, in ${timeLeft(wait)}`,
    { limit, used: r.consumed, resets_at: nextUtcMidnight(now).toISOString() },
    {},
    { 'Retry-After': String(wait) },
  );
}

/** Today's count of API calls for an organization (agent-usage). */
export const apiCallsToday = (s: MeterDeps, organizationId: string) =>
  s.limits.apiCallsPerDay.used(dayKey(organizationId, s.now()));

/**
 * The same metering for routes that authenticate in their own way (/auth/v1/user, /logout): a
 * valid bearer is metered; anything else passes on, and the route answers with its own errors.
 */
export function meterIfSignedIn(s: MeterDeps, quota: QuotaRule = 'refuse'): MiddlewareHandler<AppEnv> {
  const metered = meter(s, quota);
  return async (c, next) => {
    let principal: Principal | undefined;
    try {
      const token = bearerToken(c);
      if (token) principal = principalFromClaims(await s.tokens.verify(token));
    } catch {
      principal = undefined;
    }
    if (!principal) return next();
    c.set('principal', principal);
    return metered(c, next);
  };
}

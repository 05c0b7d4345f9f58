import type { MiddlewareHandler } from 'hono';
import { claimedOrganization, type Principal } from '../db/database.ts';
import { noOrganization } from '../errors.ts';
import type { AppEnv } from './env.ts';

/**
 * The one check that a person acts in an organization, read from the token's claims before any
 * query: without it, row-level security would answer reads with [] and writes with a bare 403.
 * Agents always have one; the service role and anonymous callers are left to their own rules.
 */
export function assertOrganization(principal: Principal): void {
  if (principal.kind === 'user' && !claimedOrganization(principal)) throw noOrganization();
}

/** The same check for every route under a path (functions that act in the current organization). */
export const requireOrganization = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  assertOrganization(c.get('principal'));
  await next();
};

import type { Deps } from '../domain/deps.ts';
import { apiCallsToday } from '../platform/http/meter.ts';
import type { Services } from '../services.ts';

/**
 * The services as src/domain takes them (`Deps`): the same objects, plus the day's API-call
 * counter, which the HTTP meter keeps and the usage report reads. Functions and MCP both use it.
 */
export const domainDeps = (s: Services): Deps => ({
  db: s.db,
  plans: s.plans,
  passwords: s.passwords,
  tokens: s.tokens,
  apiCallsToday: (organizationId) => apiCallsToday(s, organizationId),
});

import type { MessagingChannel } from '../channels/inbound-event.ts';
import type { Database } from '../platform/db/database.ts';
import type { Tokens } from '../platform/jwt.ts';
import type { Passwords } from '../platform/passwords.ts';
import type { Secrets } from '../platform/secrets.ts';
import type { PlanCache } from './plan-cache.ts';

// One way in for what src/domain needs (docs/decisions.md, "One way in"): a function that opens
// its own transaction or uses a service takes `deps` first, typed as the part of `Deps` it reads
// (`Pick<Deps, 'db'>`), then the principal it acts for, then its input. A function that runs
// inside a transaction its caller opened takes that transaction first instead: `(tx, input)`.
// `Services` (src/services.ts) holds every `Deps` field but the day's call counter, so an entry
// point passes its services as they are, or `domainDeps(services)` where that counter is read.

export type Deps = {
  db: Database;
  plans: PlanCache;
  passwords: Passwords;
  tokens: Tokens;
  /** Seals and opens connected accounts' secrets; only the sending and receiving code opens them. */
  secrets: Secrets;
  /** Calls the organization made today (the daily quota's counter; src/platform/http/meter.ts). */
  apiCallsToday: (organizationId: string) => Promise<number>;
};

/**
 * The entry point a record was created through, stored in its `source` column. The domain never
 * assumes one: the entry point names itself. (`order` is a contact created for an order's
 * customer; imports and webhooks name their channel, e.g. `shopify`.)
 */
export type Source = 'mcp' | 'rest' | 'function' | 'dashboard' | 'order' | 'shopify' | MessagingChannel;

import type { SessionDeps } from './auth/session.ts';
import type { SigningKeys } from './auth/signing-keys.ts';
import type { Config } from './config.ts';
import type { Deps } from './domain/deps.ts';
import type { KeyCheck } from './domain/key-check.ts';
import type { PlanCache } from './domain/plan-cache.ts';
import type { Database } from './platform/db/database.ts';
import { apiCallsToday } from './platform/http/meter.ts';
import type { Tokens } from './platform/jwt.ts';
import type { Logger } from './platform/log.ts';
import type { MailDispatch } from './platform/mail/dispatch.ts';
import type { Metrics } from './platform/metrics/metrics.ts';
import type { Passwords } from './platform/passwords.ts';
import type { WakeSignal } from './platform/queue/batch-loop.ts';
import type { Queue } from './platform/queue/queue.ts';
import { countRefusals, createLimiter, type Limiter, type LimitStore } from './platform/rate-limit.ts';
import type { Secrets } from './platform/secrets.ts';
import type { ObjectStore } from './platform/storage/object-store.ts';
import type { SchemaCache } from './rest/schema-cache.ts';

export type Limits = {
  loginPerIp: Limiter;
  /** The account's ceiling across all addresses (distributed guessing). */
  loginFailuresPerEmail: Limiter;
  /** The lock of one address out of one account: a stranger's guesses never lock out the owner. */
  loginFailuresPerEmailAndIp: Limiter;
  signupPerIp: Limiter;
  /** Recovery mails asked for an email (whether or not it has an account) and from an address. */
  recoverPerEmail: Limiter;
  recoverPerIp: Limiter;
  /** Invitations (each one a mail) per inviting person, per organization, per recipient email. */
  invitesPerUser: Limiter;
  invitesPerOrg: Limiter;
  invitesPerEmail: Limiter;
  /** Spec section 8: per user or agent per organization. */
  standard: Limiter;
  bulk: Limiter;
  webhookPerIp: Limiter;
  agentAuthPerIp: Limiter;
  registerPerEmail: Limiter;
  registerPerIp: Limiter;
  /** MCP sign-in (src/oauth): authorize, token and revocation per address, as agent-auth's. */
  oauthPerIp: Limiter;
  /** Dynamic Client Registration per address, as agent self-registration's. */
  oauthRegisterPerIp: Limiter;
  /** Counts authenticated requests per organization and UTC day; the plan sets the ceiling. */
  apiCallsPerDay: Limiter;
};

/** Everything a route needs, built once in main.ts and passed down as an argument. */
export type Services = {
  config: Config;
  publicUrl: string;
  db: Database;
  keys: SigningKeys;
  /** Seals and opens connected accounts' secrets (src/platform/secrets.ts). */
  secrets: Secrets;
  tokens: Tokens;
  passwords: Passwords;
  /** What issuing a session needs: the signer and the access-token lifetime. */
  sessions: SessionDeps;
  limits: Limits;
  /** Plan limits by organization, cached briefly (every authenticated request needs its daily quota). */
  plans: PlanCache;
  /** Tables and views /rest/v1 serves, read from the catalog at start. */
  schema: SchemaCache;
  /** While `schema` is being read at start, that read (rest/schema-cache.ts, schemaCacheLoading). */
  schemaPending?: () => Promise<void> | undefined;
  log: Logger;
  /** Outgoing mail: SMTP, or the development outbox. */
  mail: MailDispatch;
  /** Jobs for the worker, enqueued in the request's transaction (docs/jobs.md). */
  queue: Queue;
  /** Wakes this process's webhook inbox router after a receipt commits (none with WORKER=off). */
  webhookInbox: WakeSignal;
  /** The files of /storage/v1 (the social-media bucket): on disk or on S3 (open-store.ts, docs/storage.md). */
  storage: ObjectStore;
  /** The wall clock for calendar rules computed here (the daily quota's UTC day); tests pass a fixed one. */
  now: () => Date;
  /** Whether an agent token's key is still live, remembered briefly, forgotten on a revocation's notice. */
  keyCheck: KeyCheck;
  /** Prometheus metrics (src/platform/metrics; GET /metrics). */
  metrics: Metrics;
};

const MINUTE = 60;

/** Every limit; `refused` is told the limit's name each time one refuses (the refusals metric). */
export function createLimits(config: Config, store: LimitStore, refused?: (limit: string) => void): Limits {
  const rule = (name: string, points: number, durationSeconds: number) => {
    const limiter = createLimiter(store, name, { points, durationSeconds });
    return refused ? countRefusals(limiter, () => refused(name)) : limiter;
  };
  const r = config.rateLimits;
  return {
    loginPerIp: rule('login-ip', config.login.maxPerIp, config.login.ipWindowSeconds),
    loginFailuresPerEmail: rule(
      'login-email',
      config.login.maxFailuresPerEmail,
      config.login.emailWindowSeconds,
    ),
    loginFailuresPerEmailAndIp: rule(
      'login-email-ip',
      config.loginPerEmailAndIp.maxFailures,
      config.loginPerEmailAndIp.windowSeconds,
    ),
    signupPerIp: rule('signup-ip', config.signup.maxPerIp, config.signup.ipWindowSeconds),
    recoverPerEmail: rule('recover-email', config.recovery.maxPerEmail, config.recovery.emailWindowSeconds),
    recoverPerIp: rule('recover-ip', config.recovery.maxPerIp, config.recovery.ipWindowSeconds),
    invitesPerUser: rule('invites-user', config.mail.invitesPerUserPerHour, 3600),
    invitesPerOrg: rule('invites-org', config.mail.invitesPerOrgPerHour, 3600),
    invitesPerEmail: rule('invites-email', config.mail.invitesPerEmailPerHour, 3600),
    standard: rule('standard', r.standardPerMinute, MINUTE),
    bulk: rule('bulk', r.bulkPerMinute, MINUTE),
    webhookPerIp: rule('webhook-ip', r.webhookPerMinute, MINUTE),
    agentAuthPerIp: rule('agent-auth-ip', r.agentAuthPerMinute, MINUTE),
    registerPerEmail: rule('register-email', r.registerPerEmailPerDay, 24 * 3600),
    registerPerIp: rule('register-ip', r.registerPerIpPerHour, 3600),
    oauthPerIp: rule('oauth-ip', r.agentAuthPerMinute, MINUTE),
    oauthRegisterPerIp: rule('oauth-register-ip', r.registerPerIpPerHour, 3600),
    // Keys carry the UTC date, so a day's count starts afresh; the window only has to outlive it.
    apiCallsPerDay: rule('api-calls', Number.MAX_SAFE_INTEGER, 2 * 24 * 3600),
  };
}

/**
 * The services as src/domain takes them (`Deps`): the same objects, plus the day's API-call
 * counter, which the HTTP meter keeps and the usage report reads.
 */
export const domainDeps = (s: Services): Deps => ({
  db: s.db,
  plans: s.plans,
  passwords: s.passwords,
  tokens: s.tokens,
  secrets: s.secrets,
  apiCallsToday: (organizationId) => apiCallsToday(s, organizationId),
});

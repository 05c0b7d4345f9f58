import {
  type CheckConfig,
  type CheckResult,
  checkAccount,
  refreshInstagramToken,
} from '../channels/account-check.ts';
import { checkShopifyToken, type ShopifyAdminConfig } from '../channels/shopify-admin.ts';
import {
  type AccountToCheck,
  accountsToCheck,
  markHealthy,
  markNeedsReconnect,
  reasonSentence,
  storeRefreshedToken,
} from '../domain/connection-health.ts';
import { AppError } from '../platform/errors.ts';
import type { JobDefinition, JobPolicy } from '../platform/queue/queue.ts';
import type { JobDeps } from './deps.ts';

// The connection check (docs/jobs.md "Connection health"): once a day at CONNECTION_CHECK_HOUR_UTC,
// every live account's token is asked of its provider (src/channels/account-check.ts) and the
// answer written on the account: a refusal makes it `needs_reconnect` with the provider's reason,
// a pass clears that (and proves an account connected before migration 0030), an outage changes
// nothing. Instagram tokens near their 60-day end are refreshed. A worker's start also asks for a
// run over the accounts no check has proven yet, so an upgraded deployment's accounts come back
// within minutes, not the next day. The daily run is a keyed job per UTC day, like the purge.
// Every provider call happens outside any transaction; each account's write is one statement.

export const CHECK_JOB = 'check-connections';
/** `day`: the daily run over every account; `unverified`: the run a worker's start asks for. */
export type CheckJob = { day: string } | { unverified: string };

/** A run retries within the day; its lease covers a long account list at bounded concurrency. */
const policy: JobPolicy = {
  attempts: 3,
  backoffSeconds: 300,
  maxBackoffSeconds: 3600,
  maxAgeSeconds: 20 * 3600,
  leaseSeconds: 3600,
};

const PAGE = 100;

/** The first CONNECTION_CHECK_HOUR_UTC o'clock strictly after `now`. */
export function nextCheckAt(now: Date, hourUtc: number): Date {
  const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hourUtc));
  if (at <= now) at.setUTCDate(at.getUTCDate() + 1);
  return at;
}

/** Makes sure the next daily run is in the queue (a no-op when a worker already put it there). */
export async function scheduleNextCheck(deps: Pick<JobDeps, 'config' | 'db' | 'now' | 'queue'>) {
  const at = nextCheckAt(deps.now(), deps.config.connectionCheck.hourUtc);
  const day = at.toISOString().slice(0, 10);
  await deps.db.transaction((tx) => deps.queue.enqueue(tx, CHECK_JOB, { day }, { startAfter: at, key: day }));
}

/**
 * At a worker's start: a run over the accounts never proven, when there are any. Keyed by the
 * hour, so workers starting together ask once.
 */
export async function checkUnverifiedAtStart(deps: Pick<JobDeps, 'db' | 'now' | 'queue'>) {
  const [row] = await deps.db.query<{ any: boolean }>(
    `select exists (select 1 from app.connected_accounts a
                     where a.disconnected_at is null and a.verified_at is null) as any`,
  );
  if (!row?.any) return;
  const hour = deps.now().toISOString().slice(0, 13);
  const job: CheckJob = { unverified: hour };
  await deps.db.transaction((tx) => deps.queue.enqueue(tx, CHECK_JOB, job, { key: `unverified/${hour}` }));
}

export type CheckReport = {
  checked: number;
  refused: number;
  unknown: number;
  refreshed: number;
  errors: number;
};

/** Checks every live account (or only the unproven ones), a page at a time, `concurrency` at once. */
export async function checkConnections(
  deps: Pick<JobDeps, 'config' | 'db' | 'log' | 'now' | 'secrets'>,
  { unverifiedOnly = false } = {},
): Promise<CheckReport> {
  const config: CheckConfig = {
    ...deps.config.graph,
    appAccessToken: deps.config.connectionCheck.metaAppToken,
    checkShopify: (shop, token) => checkShop(deps.config.shopify, shop, token),
  };
  const report: CheckReport = { checked: 0, refused: 0, unknown: 0, refreshed: 0, errors: 0 };
  let after: { organization_id: string; id: string } | null = null;
  do {
    const page = await accountsToCheck(deps, after, PAGE, { unverifiedOnly });
    for (const a of page.unopened)
      deps.log.warn({ account: a }, 'connection check: the token does not open with this SECRETS_KEY');
    await inParallel(page.accounts, deps.config.connectionCheck.concurrency, async (account) => {
      try {
        const outcome = await checkOne(deps, config, account);
        report.checked++;
        if (outcome === 'refused') report.refused++;
        if (outcome === 'unknown') report.unknown++;
        if (outcome === 'refreshed') report.refreshed++;
      } catch (err) {
        // One account's failure never stops the rest: its next check is tomorrow's.
        report.errors++;
        deps.log.warn(
          { err, account: { organization_id: account.organization_id, id: account.id } },
          'connection check failed',
        );
      }
    });
    after = page.next;
  } while (after);
  return report;
}

async function checkOne(
  deps: Pick<JobDeps, 'config' | 'db' | 'now' | 'secrets'>,
  config: CheckConfig,
  account: AccountToCheck,
): Promise<'ok' | 'refused' | 'unknown' | 'refreshed' | 'skipped'> {
  const result = await checkAccount(config, account);
  if (result.state === 'skipped') return 'skipped';
  if (result.state === 'unknown') return 'unknown';
  if (result.state === 'refused') {
    await markNeedsReconnect(
      deps.db,
      account.organization_id,
      account.id,
      reasonSentence(account.provider, result.reason),
      {
        checked: true,
      },
    );
    return 'refused';
  }
  await markHealthy(deps.db, account, result);
  if (account.provider !== 'instagram' || !refreshDue(deps, account)) return 'ok';
  // A working token near its end (or of unknown age: connected before the service kept expiries).
  const fresh = await refreshInstagramToken(config, account.access_token, deps.now());
  if (fresh.state !== 'ok') return 'ok'; // it still works today; tomorrow's run asks again
  return (await storeRefreshedToken(deps, account, fresh.token, fresh.expiresAt)) ? 'refreshed' : 'ok';
}

const refreshDue = (deps: Pick<JobDeps, 'config' | 'now'>, account: AccountToCheck) =>
  !account.token_expires_at ||
  new Date(account.token_expires_at).getTime() - deps.now().getTime() <=
    deps.config.connectionCheck.refreshDays * 86_400_000;

async function inParallel<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}

export function checkConnectionsJob(deps: JobDeps): JobDefinition<CheckJob> {
  return {
    name: CHECK_JOB,
    slots: 1, // a few runs a day: one slot, polling rarely (JobDefinition.slots, rare)
    rare: true,
    policy,
    async run(job) {
      const daily = 'day' in job.data;
      if (daily) await scheduleNextCheck(deps);
      const report = await checkConnections(deps, { unverifiedOnly: !daily });
      deps.log.info({ job: { name: CHECK_JOB, ...job.data }, report }, 'connection check done');
      return { status: 'done' };
    },
  };
}

/** Shopify's answer as a check: a refusal or another shop's token is final; an outage tells nothing. */
async function checkShop(config: ShopifyAdminConfig, shop: string, token: string): Promise<CheckResult> {
  try {
    const read = await checkShopifyToken(config, shop, token);
    return read.ok
      ? { state: 'ok', provesOwner: true, expiresAt: null }
      : { state: 'refused', reason: read.reason };
  } catch (err) {
    if (err instanceof AppError && err.code === 'provider_error')
      return { state: 'unknown', reason: err.message };
    throw err;
  }
}

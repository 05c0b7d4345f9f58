import type { Queryable } from '../platform/db/database.ts';
import { AppError } from '../platform/errors.ts';
import { type AccountWithSecrets, type Provider, secretContext } from './connected-accounts.ts';
import type { Deps } from './deps.ts';

// Connection health (docs/conversations.md "Connection health"): what the daily check, the send and
// publish paths and the displays read and write on the columns of migrations/0030_account_proof.sql.
// An account needs a reconnect while `needs_reconnect_at` is set; `needs_reconnect_reason` says why
// in the provider's words, as a sentence a shop owner reads in the dashboard.

/** The refusal a send on an account that needs a reconnect gets, at once (409: the account's state conflicts). */
export const accountNeedsReconnect = (account: {
  id: string;
  provider: string;
  external_id: string;
  name?: string | null;
  reason: string | null;
}) =>
  new AppError(
    409,
    'account_needs_reconnect',
    `The ${LABEL[account.provider as Provider] ?? account.provider} account ${account.name ?? account.external_id} needs to be connected again before it can send: ${account.reason ?? 'its token stopped working.'}`,
    {
      account_id: account.id,
      provider: account.provider,
      external_id: account.external_id,
      reason: account.reason,
    },
  );

const LABEL: Record<Provider, string> = {
  whatsapp: 'WhatsApp',
  facebook: 'Facebook',
  instagram: 'Instagram',
  shopify: 'Shopify',
};

/** The provider's words as a sentence the dashboard shows: who said it, capped to the column's 1,000 characters. */
export function reasonSentence(provider: Provider, said: string): string {
  const words = said.trim().replace(/\s+/g, ' ') || 'the token no longer works';
  const sentence = `${LABEL[provider]} stopped accepting this account's token: ${words}`;
  const ended = /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
  return ended.length <= 1000 ? ended : `${ended.slice(0, 997)}...`;
}

/**
 * Marks a live account as needing a reconnect with `reason` (service path). The first time it is
 * marked stays its `needs_reconnect_at`; the reason is the latest.
 */
export async function markNeedsReconnect(
  q: Queryable,
  organizationId: string,
  accountId: string,
  reason: string,
  { checked = false } = {},
) {
  await q.query(
    `update app.connected_accounts a
        set needs_reconnect_at = coalesce(a.needs_reconnect_at, now()), needs_reconnect_reason = $3
            ${checked ? ', checked_at = now()' : ''}
      where a.organization_id = $1 and a.id = $2 and a.disconnected_at is null`,
    [organizationId, accountId, reason],
  );
}

/**
 * Records a check the provider passed: the reconnect flag is cleared, the expiry kept when the
 * provider named one, and an account never proven (connected before migration 0030) is proven by
 * this check when `provesOwner` (the token acts for its external id) — only then does it receive
 * deliveries again. Only a row whose token is still the one that was checked is touched: a
 * reconnect meanwhile wrote its own proof.
 */
export async function markHealthy(
  q: Queryable,
  account: { organization_id: string; id: string; token_sealed: string },
  result: { provesOwner: boolean; expiresAt: Date | null },
) {
  await q.query(
    `update app.connected_accounts a
        set checked_at = now(),
            token_expires_at = coalesce($4, a.token_expires_at),
            verified_at = case when a.verified_at is null and $5 then now() else a.verified_at end,
            verified_by = case when a.verified_at is null and $5 then 'token' else a.verified_by end,
            needs_reconnect_at = case when a.verified_at is null and not $5 then a.needs_reconnect_at end,
            needs_reconnect_reason = case when a.verified_at is null and not $5 then a.needs_reconnect_reason end
      where a.organization_id = $1 and a.id = $2 and a.access_token_encrypted = $3 and a.disconnected_at is null`,
    [account.organization_id, account.id, account.token_sealed, result.expiresAt, result.provesOwner],
  );
}

/** Records that the check ran and the provider could not be asked: nothing else changes. */
export async function markChecked(q: Queryable, organizationId: string, accountId: string) {
  await q.query(
    'update app.connected_accounts a set checked_at = now() where a.organization_id = $1 and a.id = $2',
    [organizationId, accountId],
  );
}

/**
 * Stores a refreshed token (Instagram's 60-day tokens), sealed, with its new expiry; only over the
 * token it replaces, so a reconnect meanwhile wins.
 */
export async function storeRefreshedToken(
  deps: Pick<Deps, 'db' | 'secrets'>,
  account: { organization_id: string; id: string; token_sealed: string },
  token: string,
  expiresAt: Date | null,
) {
  const sealed = deps.secrets.seal(token, secretContext(account.organization_id, account.id, 'access_token'));
  const rows = await deps.db.query(
    `update app.connected_accounts a set access_token_encrypted = $4, token_expires_at = $5
      where a.organization_id = $1 and a.id = $2 and a.access_token_encrypted = $3 returning a.id`,
    [account.organization_id, account.id, account.token_sealed, sealed, expiresAt],
  );
  return rows.length === 1 ? sealed : null;
}

/** An account to check, its token opened (non-enumerable, like AccountWithSecrets). */
export type AccountToCheck = Pick<
  AccountWithSecrets,
  'organization_id' | 'id' | 'provider' | 'external_id' | 'name' | 'access_token'
> & {
  token_sealed: string;
  verified_at: Date | null;
  token_expires_at: Date | null;
  needs_reconnect_at: Date | null;
};

/**
 * One page of live accounts after `after` (keyset on organization and id, so a page is one index
 * range however many there are), tokens opened. `unverifiedOnly`: the accounts connected before
 * migration 0030 that no check has proven yet. A token that does not open (sealed under another
 * SECRETS_KEY) comes back with an empty token: the check cannot ask, and says so in the log.
 */
export async function accountsToCheck(
  deps: Pick<Deps, 'db' | 'secrets'>,
  after: { organization_id: string; id: string } | null,
  limit: number,
  { unverifiedOnly = false } = {},
): Promise<{
  accounts: AccountToCheck[];
  unopened: { organization_id: string; id: string }[];
  /** Where the next page starts; null on the last. */
  next: { organization_id: string; id: string } | null;
}> {
  const rows = await deps.db.query<{
    organization_id: string;
    id: string;
    provider: Provider;
    external_id: string;
    name: string | null;
    token_sealed: string;
    verified_at: Date | null;
    token_expires_at: Date | null;
    needs_reconnect_at: Date | null;
  }>(
    `select a.organization_id, a.id, a.provider, a.external_id, a.name, a.access_token_encrypted as token_sealed,
            a.verified_at, a.token_expires_at, a.needs_reconnect_at
       from app.connected_accounts a
      where a.disconnected_at is null and ($1::uuid is null or (a.organization_id, a.id) > ($1::uuid, $2::uuid))
        and (not $4 or a.verified_at is null)
      order by a.organization_id, a.id limit $3`,
    [after?.organization_id ?? null, after?.id ?? null, limit, unverifiedOnly],
  );
  const accounts: AccountToCheck[] = [];
  const unopened: { organization_id: string; id: string }[] = [];
  for (const row of rows) {
    let token: string;
    try {
      token = deps.secrets.open(row.token_sealed, secretContext(row.organization_id, row.id, 'access_token'));
    } catch {
      unopened.push({ organization_id: row.organization_id, id: row.id });
      continue;
    }
    accounts.push(
      Object.defineProperty(row, 'access_token', { value: token, enumerable: false }) as AccountToCheck,
    );
  }
  const last = rows.at(-1);
  const next = last && rows.length === limit ? { organization_id: last.organization_id, id: last.id } : null;
  return { accounts, unopened, next };
}

/**
 * Why an account needs a reconnect (null: it does not), from the account as accountById read it
 * (its status and reason come in the same row: no statement of its own on the publish path).
 */
export function reconnectReason(account: {
  status: string;
  needs_reconnect_reason: string | null;
}): { reason: string } | null {
  return account.status === 'needs_reconnect'
    ? { reason: account.needs_reconnect_reason ?? 'Its token stopped working.' }
    : null;
}

/** The caller's live accounts that need a reconnect (inside the caller's transaction: row-level security decides). */
export async function accountsNeedingReconnect(tx: Queryable) {
  return tx.query<{
    id: string;
    provider: Provider;
    external_id: string;
    name: string | null;
    reason: string | null;
  }>(
    `select a.id, a.provider, a.external_id, a.name, a.needs_reconnect_reason as reason
       from public.connected_accounts a
      where a.organization_id = app.current_org_id() and a.status = 'needs_reconnect'
      order by a.created_at, a.id limit 50`,
  );
}

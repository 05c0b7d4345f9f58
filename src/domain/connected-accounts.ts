import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Principal } from '../platform/db/database.ts';
import { alreadyExists, notFound, type PgError } from '../platform/errors.ts';
import type { Deps } from './deps.ts';
import { parseInput } from './inputs.ts';
import { requireCurrentOrg, requireOrgAdmin } from './organizations.ts';

// The outside accounts an organization talks through (migrations/0016_conversations.sql). Takes
// the caller's principal and plain input; gives out accounts without their secrets. Secrets are
// sealed here before they reach the database and opened only for the sending and receiving code
// (accountForSending, accountByExternalId), whose answers keep them out of JSON and logs.

export const PROVIDERS = ['whatsapp', 'facebook', 'instagram', 'shopify'] as const;
export type Provider = (typeof PROVIDERS)[number];

const PRINTABLE = /^[\x21-\x7E]+$/;
const PRINTABLE_MESSAGE =
  'must be printable ASCII without spaces or line breaks (copy it again from Meta or Shopify)';

export const NewConnectedAccount = z
  .object({
    provider: z.enum(PROVIDERS),
    external_id: z.string().trim().min(1).max(255),
    name: z.string().trim().min(1).max(200).optional(),
    // Tokens and secrets travel in HTTP headers and HMAC keys: printable ASCII, no spaces. A pasted
    // token that wrapped or kept its newline is refused here, not at every send.
    access_token: z.string().trim().min(1).max(4096).regex(PRINTABLE, PRINTABLE_MESSAGE),
    webhook_secret: z.string().trim().min(1).max(1024).regex(PRINTABLE, PRINTABLE_MESSAGE).optional(),
  })
  .superRefine((v, ctx) => {
    // Shopify signs every webhook with the app's secret: without it nothing inbound can be trusted.
    if (v.provider === 'shopify' && v.webhook_secret === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['webhook_secret'],
        message: 'A Shopify account needs its app secret as webhook_secret',
      });
    // Shopify names the shop by its permanent domain in X-Shopify-Shop-Domain, lowercase.
    if (v.provider === 'shopify' && !SHOP_DOMAIN.test(v.external_id))
      ctx.addIssue({
        code: 'custom',
        path: ['external_id'],
        message: 'A Shopify account is its shop domain, e.g. my-shop.myshopify.com',
      });
  })
  .transform((v) => (v.provider === 'shopify' ? { ...v, external_id: v.external_id.toLowerCase() } : v));

const SHOP_DOMAIN = /^[a-z0-9][a-z0-9-]{0,99}\.myshopify\.com$/i;

export type ConnectedAccount = {
  organization_id: string;
  id: string;
  provider: Provider;
  external_id: string;
  name: string | null;
  status: 'connected' | 'needs_reconnect' | 'disconnected';
  has_webhook_secret: boolean;
  created_by: string | null;
  disconnected_at: Date | null;
  created_at: Date;
  updated_at: Date;
  needs_reconnect_reason: string | null;
};

/** An account with its secrets opened. The secrets are not enumerable: JSON and logs skip them. */
export type AccountWithSecrets = ConnectedAccount & {
  readonly access_token: string;
  readonly webhook_secret: string | null;
};

// What any caller may see of an account, from the table the view reads.
const COLUMNS = `a.organization_id, a.id, a.provider, a.external_id, a.name,
  case when a.disconnected_at is not null then 'disconnected'
       when a.needs_reconnect_at is not null then 'needs_reconnect' else 'connected' end as status,
  a.has_webhook_secret, a.created_by, a.disconnected_at, a.created_at, a.updated_at, a.needs_reconnect_reason`;

/** What a sealed secret is bound to: a copy in another row, organization or column does not open. */
export const secretContext = (
  organizationId: string,
  accountId: string,
  field: 'access_token' | 'webhook_secret',
) => `connected_accounts:${organizationId}:${accountId}:${field}`;

/** The organization's connected accounts, oldest first, and how many there are. */
export async function listConnectedAccounts(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  page: { limit: number; offset: number },
) {
  return deps.db.asPrincipal(
    principal,
    async (tx) => {
      await requireCurrentOrg(tx);
      const [count] = await tx.query<{ n: number }>(
        'select count(*)::int as n from app.connected_accounts a where a.disconnected_at is null',
      );
      const accounts = await tx.query<ConnectedAccount>(
        `select ${COLUMNS} from app.connected_accounts a where a.disconnected_at is null
          order by a.created_at, a.id limit $1 offset $2`,
        [page.limit, page.offset],
      );
      return { accounts, total: count?.n ?? 0 };
    },
    { readOnly: true },
  );
}

const liveKeyTaken = (e: unknown) =>
  (e as PgError).code === '23505' && (e as PgError).constraint === 'connected_accounts_live_key';

/**
 * Connects an account (owners and admins). Connecting one this organization disconnected before
 * revives that row with the new secrets, so its conversations stay attached. A (provider,
 * external_id) connected anywhere else is 409 duplicate, decided by the unique index (race-proof)
 * and naming no other organization.
 */
export async function connectAccount(
  deps: Pick<Deps, 'db' | 'secrets'>,
  principal: Principal,
  input: z.input<typeof NewConnectedAccount>,
): Promise<ConnectedAccount> {
  const a = parseInput(NewConnectedAccount, input);
  return deps.db.asPrincipal(principal, async (tx) => {
    const org = await requireCurrentOrg(tx);
    await requireOrgAdmin(tx, 'Only owners and admins may connect accounts');
    const duplicate = (existingId?: string) =>
      alreadyExists(`This ${a.provider} account is already connected`, {
        provider: a.provider,
        external_id: a.external_id,
        ...(existingId ? { existing_id: existingId } : {}),
      });
    // Row-level security shows this organization's rows only: which of them match, live or not.
    const mine = await tx.query<{ id: string; live: boolean }>(
      `select a.id, a.disconnected_at is null as live from app.connected_accounts a
        where a.provider = $1 and a.external_id = $2 order by a.disconnected_at desc nulls first, a.id`,
      [a.provider, a.external_id],
    );
    const live = mine.find((m) => m.live);
    if (live) throw duplicate(live.id);
    const id = mine[0]?.id ?? randomUUID();
    const token = deps.secrets.seal(a.access_token, secretContext(org, id, 'access_token'));
    const hook =
      a.webhook_secret && deps.secrets.seal(a.webhook_secret, secretContext(org, id, 'webhook_secret'));
    try {
      const [row] = mine[0]
        ? await tx.query<ConnectedAccount>(
            `update app.connected_accounts a set name = coalesce($2, a.name), access_token_encrypted = $3,
                    webhook_secret_encrypted = $4, disconnected_at = null, disconnected_by = null
              where a.id = $1 and a.disconnected_at is not null returning ${COLUMNS}`,
            [id, a.name ?? null, token, hook ?? null],
          )
        : await tx.query<ConnectedAccount>(
            `insert into app.connected_accounts as a (organization_id, id, provider, external_id, name,
                    access_token_encrypted, webhook_secret_encrypted, created_by)
             values ($1, $2, $3, $4, $5, $6, $7, auth.uid()) returning ${COLUMNS}`,
            [org, id, a.provider, a.external_id, a.name ?? null, token, hook ?? null],
          );
      // A concurrent request of this organization revived it first.
      if (!row) throw duplicate(id);
      return row;
    } catch (e) {
      if (liveKeyTaken(e)) throw duplicate();
      throw e;
    }
  });
}

/** Disconnects an account (owners and admins); its conversations and messages stay. Idempotent. */
export async function disconnectAccount(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  accountId: string,
): Promise<ConnectedAccount> {
  return deps.db.asPrincipal(principal, async (tx) => {
    await requireCurrentOrg(tx);
    await requireOrgAdmin(tx, 'Only owners and admins may disconnect accounts');
    // Another tenant's id finds nothing here, exactly like an unknown one.
    const [row] = await tx.query<ConnectedAccount>(
      `update app.connected_accounts a set disconnected_at = coalesce(a.disconnected_at, now()),
              disconnected_by = coalesce(a.disconnected_by, auth.uid())
        where a.id = $1 returning ${COLUMNS}`,
      [accountId],
    );
    if (!row) throw notFound('connected account');
    return row;
  });
}

type SealedRow = ConnectedAccount & {
  access_token_encrypted: string;
  webhook_secret_encrypted: string | null;
};

function opened(deps: Pick<Deps, 'secrets'>, row: SealedRow): AccountWithSecrets {
  const { access_token_encrypted, webhook_secret_encrypted, ...account } = row;
  const ctx = (field: 'access_token' | 'webhook_secret') => secretContext(row.organization_id, row.id, field);
  return Object.defineProperties(account, {
    access_token: {
      value: deps.secrets.open(access_token_encrypted, ctx('access_token')),
      enumerable: false,
    },
    webhook_secret: {
      value: webhook_secret_encrypted && deps.secrets.open(webhook_secret_encrypted, ctx('webhook_secret')),
      enumerable: false,
    },
  }) as AccountWithSecrets;
}

const SEALED = `${COLUMNS}, a.access_token_encrypted, a.webhook_secret_encrypted`;

/**
 * A connected account of the caller's organization with its secrets, for the sending code; null
 * when the caller cannot see it or it is disconnected. Which account the caller may use is
 * decided by row-level security; only then are its secret columns read (with owner rights: no
 * API role may select them), by the key of the row the policy let through.
 */
export async function accountForSending(
  deps: Pick<Deps, 'db' | 'secrets'>,
  principal: Principal,
  accountId: string,
): Promise<AccountWithSecrets | null> {
  const [visible] = await deps.db.asPrincipal(
    principal,
    (tx) =>
      tx.query<{ organization_id: string; id: string }>(
        'select a.organization_id, a.id from app.connected_accounts a where a.id = $1 and a.disconnected_at is null',
        [accountId],
      ),
    { readOnly: true },
  );
  return visible ? accountById(deps, visible.organization_id, visible.id) : null;
}

/**
 * Which organization's live account an inbound delivery is addressed to, without opening any
 * secret (the receiver routes; only the code that calls out or verifies opens them). Null when
 * none is connected.
 */
export async function routeOf(
  deps: Pick<Deps, 'db'>,
  provider: Provider,
  externalId: string,
): Promise<{ organization_id: string; id: string } | null> {
  const [row] = await deps.db.query<{ organization_id: string; id: string }>(
    `select a.organization_id, a.id from app.connected_accounts a
      where a.provider = $1 and a.external_id = $2 and a.disconnected_at is null`,
    [provider, externalId],
  );
  return row ?? null;
}

/**
 * The connected account an inbound webhook is addressed to, with its secrets (service path: the
 * webhook names no organization; the account decides it). Null when none is connected.
 */
export async function accountByExternalId(
  deps: Pick<Deps, 'db' | 'secrets'>,
  provider: Provider,
  externalId: string,
): Promise<AccountWithSecrets | null> {
  return liveAccount(deps, 'a.provider = $1 and a.external_id = $2', [provider, externalId]);
}

/** A live account by its key with its secrets (service path: the publisher and metrics jobs). */
export async function accountById(
  deps: Pick<Deps, 'db' | 'secrets'>,
  organizationId: string,
  accountId: string,
): Promise<AccountWithSecrets | null> {
  return liveAccount(deps, 'a.organization_id = $1 and a.id = $2', [organizationId, accountId]);
}

/** The live account `where` picks, its secrets opened (owner rights: the service path). */
async function liveAccount(
  deps: Pick<Deps, 'db' | 'secrets'>,
  where: string,
  params: unknown[],
): Promise<AccountWithSecrets | null> {
  const [row] = await deps.db.query<SealedRow>(
    `select ${SEALED} from app.connected_accounts a where ${where} and a.disconnected_at is null`,
    params,
  );
  return row ? opened(deps, row) : null;
}

import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Proof, ProofInput } from '../channels/proof.ts';
import type { Principal } from '../platform/db/database.ts';
import { alreadyExists, notFound, type PgError } from '../platform/errors.ts';
import type { Deps } from './deps.ts';
import { parseInput } from './inputs.ts';
import { requireCurrentOrg, requireOrgAdmin } from './organizations.ts';

// The outside accounts an organization talks through (migrations/0016_conversations.sql). Takes
// the caller's principal and plain input; gives out accounts without their secrets. Secrets are
// sealed here before they reach the database and opened only for the sending and receiving code
// (accountForSending, accountById, claimsOf), whose answers keep them out of JSON and logs.

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
  /** When the provider last confirmed the token acts for the account, and how (migrations/0030_account_proof.sql). */
  verified_at: Date | null;
  verified_by: 'oauth' | 'token' | null;
  token_expires_at: Date | null;
  checked_at: Date | null;
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
  a.has_webhook_secret, a.created_by, a.disconnected_at, a.created_at, a.updated_at,
  a.verified_at, a.verified_by, a.token_expires_at, a.checked_at, a.needs_reconnect_reason`;

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
 * Connects an account (owners and admins) once the provider has proven that the token acts for
 * it (`prove`, src/channels/account-proof.ts, called outside any transaction). Another
 * organization's claim on the same account never changes the answer (docs/decisions.md "Who
 * receives an account's deliveries").
 */
export async function connectAccount(
  deps: Pick<Deps, 'db' | 'secrets'>,
  principal: Principal,
  input: z.input<typeof NewConnectedAccount>,
  prove: (input: ProofInput) => Promise<Proof>,
): Promise<ConnectedAccount> {
  const a = parseInput(NewConnectedAccount, input);
  // Who may connect is decided before the provider is asked: a member must not learn from the
  // answers which tokens act for which accounts.
  await deps.db.asPrincipal(
    principal,
    async (tx) => {
      await requireCurrentOrg(tx);
      await requireOrgAdmin(tx, 'Only owners and admins may connect accounts');
    },
    { readOnly: true },
  );
  const proof = await prove(a);
  return saveProof(deps, principal, proof, a.name);
}

/**
 * Stores a proven account for the caller's organization (owners and admins): a new one, or one
 * this organization has, live (a reconnect: fresh token, needs_reconnect cleared) or disconnected
 * (revived with its conversations). Only this organization's rows are read or written, so the
 * answer is the same whether or not another organization has the account. Exported for the
 * sign-in flows, which prove through OAuth instead of a pasted token.
 */
export async function saveProof(
  deps: Pick<Deps, 'db' | 'secrets'>,
  principal: Principal,
  proof: Proof,
  /** The name the person gave; else a reconnect keeps the account's, and a new one takes the provider's. */
  name?: string,
): Promise<ConnectedAccount> {
  return deps.db.asPrincipal(principal, async (tx) => {
    const org = await requireCurrentOrg(tx);
    await requireOrgAdmin(tx, 'Only owners and admins may connect accounts');
    // Row-level security shows this organization's rows only: the live one first, else the
    // most recently disconnected.
    const [mine] = await tx.query<{ id: string }>(
      `select a.id from app.connected_accounts a where a.provider = $1 and a.external_id = $2
        order by a.disconnected_at desc nulls first, a.id limit 1`,
      [proof.provider, proof.external_id],
    );
    const id = mine?.id ?? randomUUID();
    const token = deps.secrets.seal(proof.access_token, secretContext(org, id, 'access_token'));
    const hook =
      proof.webhook_secret &&
      deps.secrets.seal(proof.webhook_secret, secretContext(org, id, 'webhook_secret'));
    const proven = [proof.verified_by, proof.token_expires_at];
    // A name from the provider (a Page's) may be longer than a name a person types.
    const providerName = proof.name?.slice(0, 200) ?? null;
    try {
      const [row] = mine
        ? await tx.query<ConnectedAccount>(
            `update app.connected_accounts a set name = coalesce($2, a.name, $7), access_token_encrypted = $3,
                    webhook_secret_encrypted = $4, disconnected_at = null, disconnected_by = null,
                    verified_at = now(), verified_by = $5, token_expires_at = $6, checked_at = now(),
                    needs_reconnect_at = null, needs_reconnect_reason = null
              where a.id = $1 returning ${COLUMNS}`,
            [id, name ?? null, token, hook ?? null, ...proven, providerName],
          )
        : await tx.query<ConnectedAccount>(
            `insert into app.connected_accounts as a (organization_id, id, provider, external_id, name,
                    access_token_encrypted, webhook_secret_encrypted, created_by, verified_at, verified_by,
                    token_expires_at, checked_at)
             values ($1, $2, $3, $4, $5, $6, $7, auth.uid(), now(), $8, $9, now()) returning ${COLUMNS}`,
            [
              org,
              id,
              proof.provider,
              proof.external_id,
              name ?? providerName,
              token,
              hook ?? null,
              ...proven,
            ],
          );
      if (!row) throw notFound('connected account');
      return row;
    } catch (e) {
      // Two connects of this organization raced: the other one connected it first.
      if (liveKeyTaken(e))
        throw alreadyExists(
          `This ${proof.provider} account is being connected by another request; try again`,
          {
            provider: proof.provider,
            external_id: proof.external_id,
          },
        );
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
      where a.provider = $1 and a.external_id = $2 and ${RECEIVES} order by ${NEWEST_PROOF} limit 1`,
    [provider, externalId],
  );
  return row ?? null;
}

// Who receives an account's deliveries (docs/decisions.md): live and proven claims only, a healthy
// one before one needing reconnect, then the newest proof (connected_accounts_route_idx). Also
// the statement that routes and stores a Meta delivery at once (webhook-events.ts).
export const RECEIVES = 'a.disconnected_at is null and a.verified_at is not null';
export const NEWEST_PROOF = '(a.needs_reconnect_at is null) desc, a.verified_at desc, a.id';

/**
 * The live, proven claims on an account with their secrets, in the order deliveries prefer them
 * (service path: a Shopify delivery names no organization; the claim whose secret verifies its
 * signature receives it). Empty when none is connected.
 */
export async function claimsOf(
  deps: Pick<Deps, 'db' | 'secrets'>,
  provider: Provider,
  externalId: string,
): Promise<AccountWithSecrets[]> {
  const rows = await deps.db.query<SealedRow>(
    `select ${SEALED} from app.connected_accounts a
      where a.provider = $1 and a.external_id = $2 and ${RECEIVES} order by ${NEWEST_PROOF} limit 20`,
    [provider, externalId],
  );
  return rows.map((row) => opened(deps, row));
}

/** The claim that receives an account's deliveries, with its secrets; null when none does. */
export async function accountByExternalId(
  deps: Pick<Deps, 'db' | 'secrets'>,
  provider: Provider,
  externalId: string,
): Promise<AccountWithSecrets | null> {
  return (await claimsOf(deps, provider, externalId))[0] ?? null;
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

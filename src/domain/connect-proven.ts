import { randomUUID } from 'node:crypto';
import type { Proof } from '../channels/shopify-admin.ts';
import type { Principal } from '../platform/db/database.ts';
import { alreadyExists, type PgError } from '../platform/errors.ts';
import { type ConnectedAccount, secretContext } from './connected-accounts.ts';
import type { Deps } from './deps.ts';
import { requireCurrentOrg, requireOrgAdmin } from './organizations.ts';

// TEMPORARY STAND-IN (issue 27): stores an account the provider has proven, for the caller's
// organization (owners and admins). The branch that rewrites src/domain/connected-accounts.ts
// brings the real one (`saveProof` there); the lead replaces this file's body with a call to it at
// the merge. Until then it does what that one does for Shopify's install: a new row, or this
// organization's own row of the shop (live: fresh token; disconnected: revived with its history),
// with verified_at/verified_by/token_expires_at set and needs_reconnect cleared. Only this
// organization's rows are read or written (row-level security), so the answer says nothing about
// other organizations' claims.

const COLUMNS = `a.organization_id, a.id, a.provider, a.external_id, a.name,
  case when a.disconnected_at is not null then 'disconnected'
       when a.needs_reconnect_at is not null then 'needs_reconnect' else 'connected' end as status,
  a.has_webhook_secret, a.created_by, a.disconnected_at, a.created_at, a.updated_at`;

export async function connectProven(
  deps: Pick<Deps, 'db' | 'secrets'>,
  principal: Principal,
  proof: Proof,
): Promise<ConnectedAccount> {
  return deps.db.asPrincipal(principal, async (tx) => {
    const org = await requireCurrentOrg(tx);
    await requireOrgAdmin(tx, 'Only owners and admins may connect accounts');
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
    try {
      const [row] = mine
        ? await tx.query<ConnectedAccount>(
            `update app.connected_accounts a set name = coalesce($2, a.name), access_token_encrypted = $3,
                    webhook_secret_encrypted = $4, disconnected_at = null, disconnected_by = null,
                    verified_at = now(), verified_by = $5, token_expires_at = $6, checked_at = now(),
                    needs_reconnect_at = null, needs_reconnect_reason = null
              where a.id = $1 returning ${COLUMNS}`,
            [id, proof.name, token, hook ?? null, ...proven],
          )
        : await tx.query<ConnectedAccount>(
            `insert into app.connected_accounts as a (organization_id, id, provider, external_id, name,
                    access_token_encrypted, webhook_secret_encrypted, created_by, verified_at, verified_by,
                    token_expires_at, checked_at)
             values ($1, $2, $3, $4, $5, $6, $7, auth.uid(), now(), $8, $9, now()) returning ${COLUMNS}`,
            [org, id, proof.provider, proof.external_id, proof.name, token, hook ?? null, ...proven],
          );
      return row as ConnectedAccount;
    } catch (e) {
      // Two connects of this organization raced: the other one stored it first.
      if ((e as PgError).code === '23505')
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

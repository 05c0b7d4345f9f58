import type { Principal } from '../platform/db/database.ts';
import { type ConnectedAccount, connectAccount, type Provider } from './connected-accounts.ts';
import type { Deps } from './deps.ts';

// TEMPORARY stand-in (issue 27): stores an account the provider has already proven, for the
// sign-in flows (src/functions/connect-facebook.ts, connect-whatsapp.ts, connect-instagram.ts).
// Branch `own` rewrites src/domain/connected-accounts.ts with the real store of a proven account
// (saveProof: a reconnect refreshes the live row, needs_reconnect cleared, all in one
// transaction); at the merge this file becomes a re-export of it. Until then it is today's
// connectAccount followed by recording the proof on the row it returned.

/** What the provider confirmed: the account, its name there, and the credentials that act for it. */
export type Proof = {
  provider: Provider;
  external_id: string;
  name: string | null;
  access_token: string;
  webhook_secret: string | null;
  token_expires_at: Date | null;
  verified_by: 'oauth' | 'token';
};

export async function connectProven(
  deps: Pick<Deps, 'db' | 'secrets'>,
  principal: Principal,
  proof: Proof,
): Promise<ConnectedAccount> {
  const account = await connectAccount(deps, principal, {
    provider: proof.provider,
    external_id: proof.external_id,
    // Names come from the provider: a Page name may be longer than the form's limit.
    ...(proof.name ? { name: proof.name.slice(0, 200) } : {}),
    access_token: proof.access_token,
    ...(proof.webhook_secret ? { webhook_secret: proof.webhook_secret } : {}),
  });
  await deps.db.asPrincipal(principal, (tx) =>
    tx.query(
      `update app.connected_accounts a set verified_at = now(), verified_by = $2, token_expires_at = $3,
              checked_at = now(), needs_reconnect_at = null, needs_reconnect_reason = null
        where a.id = $1`,
      [account.id, proof.verified_by, proof.token_expires_at],
    ),
  );
  return account;
}

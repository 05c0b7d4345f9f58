// What proving an account gives out and takes in, for every provider: a file of its own, so the
// provers (account-proof.ts, shopify-admin.ts) share it without importing each other.

export type ProofProvider = 'whatsapp' | 'facebook' | 'instagram' | 'shopify';

/** What the provider confirmed: the account, how it is named there, and the credentials that act for it. */
export type Proof = {
  provider: ProofProvider;
  external_id: string;
  name: string | null;
  access_token: string;
  webhook_secret: string | null;
  token_expires_at: Date | null;
  verified_by: 'oauth' | 'token';
};

export type ProofInput = {
  provider: ProofProvider;
  external_id: string;
  access_token: string;
  webhook_secret?: string | null;
};

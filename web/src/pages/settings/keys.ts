import { invoke } from '../../lib/api';
import { type ListEnvelope, pageQuery } from './list';

export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export type ApiKey = {
  id: string;
  name: string;
  /** Null for a connected app (an MCP client a person signed in: an OAuth grant). */
  key_prefix: string | null;
  oauth_client_id: string | null;
  scopes: Scope[];
  effective_scopes: Scope[];
  warning: string | null;
  expires_at: string;
  is_active: boolean;
  last_used_at: string | null;
  created_at: string;
};

/** agent-api-key-create's answer: the raw key exists only here, once. */
export type CreatedKey = {
  api_key: string;
  key_prefix: string;
  name: string;
  scopes: Scope[];
  effective_scopes: Scope[];
  warning: string | null;
  expires_at: string;
  message: string;
};

export type KeyInput = { name: string; scopes: Scope[]; expires_on: string };

export const KEYS_PAGE = 10;

export const listKeys = (page: number) =>
  invoke<ListEnvelope<ApiKey>>('agent-api-keys', { query: pageQuery(page, KEYS_PAGE) });

/** An expiry date typed as a day means the end of that day where the person is. */
export function createKey(f: KeyInput) {
  const expires_at = f.expires_on ? new Date(`${f.expires_on}T23:59:59`).toISOString() : undefined;
  return invoke<CreatedKey>('agent-api-key-create', {
    body: { name: f.name.trim(), scopes: f.scopes, expires_at },
  });
}

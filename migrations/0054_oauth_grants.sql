-- MCP sign-in with OAuth (issue 31): the service is an OAuth 2.1 authorization server for its own
-- MCP endpoint. What this file guarantees:
-- * A grant (a person allowed an MCP client into one organization) is a row of
--   public.agent_api_keys with no secret: oauth_client_id says whose it is. Being a key row, it
--   counts against the plan's `agents` ceiling (app.plan_usage counts active unexpired rows), is
--   listed and revoked by owners and admins beside the keys, and its revocation reaches its tokens
--   as a key's does (app.establish_context on every statement, the NOTIFY of migration 0034).
--   A key row has a prefix and a hash and no client; a grant the other way round.
-- * Clients (registered, or known by their metadata document's URL), authorization codes and
--   refresh tokens are the authorization server's own, like auth.*: kept on the coordinator, read
--   and written on the service path only. Codes and refresh tokens are stored as SHA-256 only;
--   a code is taken once by an update only an unused, unexpired row matches.

alter table public.agent_api_keys
  alter column key_prefix drop not null,
  alter column key_hash drop not null,
  add column oauth_client_id text check (length(oauth_client_id) between 1 and 2048),
  add column oauth_client_name text check (length(oauth_client_name) between 1 and 200),
  add constraint agent_api_keys_key_or_grant check (
    case when oauth_client_id is null
      then key_prefix is not null and key_hash is not null
      else key_prefix is null and key_hash is null and oauth_client_name is not null end);
create index agent_api_keys_grant_idx on public.agent_api_keys (organization_id, oauth_client_id)
  where oauth_client_id is not null;

create table app.oauth_clients (
  client_id text primary key check (length(client_id) between 1 and 2048),
  kind text not null check (kind in ('registered', 'metadata_document')),
  client_name text not null check (length(client_name) between 1 and 200),
  redirect_uris text[] not null check (cardinality(redirect_uris) between 1 and 20),
  -- Who registered it (rate limits are per address; this is for the operator's eyes).
  registered_ip text,
  created_at timestamptz not null default now(),
  -- A metadata document's last fetch; registrations never used by a consent expire.
  fetched_at timestamptz,
  used_at timestamptz
);
create index oauth_clients_unused_idx on app.oauth_clients (created_at) where used_at is null;

create table app.oauth_codes (
  code_hash text primary key,
  organization_id uuid not null,
  grant_id uuid not null,
  client_id text not null,
  redirect_uri text not null,
  code_challenge text not null,
  resource text not null,
  scopes text[] not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index oauth_codes_expires_idx on app.oauth_codes (expires_at);

create table app.oauth_refresh_tokens (
  token_hash text primary key,
  organization_id uuid not null,
  grant_id uuid not null,
  client_id text not null,
  resource text not null,
  parent_hash text,
  revoked boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index oauth_refresh_tokens_grant_idx on app.oauth_refresh_tokens (grant_id);
create index oauth_refresh_tokens_parent_idx on app.oauth_refresh_tokens (parent_hash);

revoke all on app.oauth_clients, app.oauth_codes, app.oauth_refresh_tokens from public, anon, authenticated;
grant all on app.oauth_clients, app.oauth_codes, app.oauth_refresh_tokens to service_role;

-- Owners and admins see which client a grant is for (the dashboard lists grants beside keys);
-- only the service writes these columns, so no API role can make a grant.
grant select (oauth_client_id, oauth_client_name) on public.agent_api_keys to authenticated;

-- One-time tokens of the identity provider (password recovery), as GoTrue keeps them in
-- auth.one_time_tokens. What this file guarantees:
-- * Neither secret is stored: the link token and the 6-digit code are kept as SHA-256 only.
-- * A user has at most one live token of a type: asking again replaces it.
-- * A token is single-use (used_at) and expires (expires_at); failed_attempts counts wrong codes
--   so the service can retire a token before its 10^6 codes can be tried.
-- Private like the rest of auth: no API role may read it.

create table auth.one_time_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  token_type text not null check (token_type in ('recovery')),
  link_hash text not null unique,
  code_hash text not null,
  failed_attempts integer not null default 0,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (user_id, token_type)
);
create trigger one_time_tokens_touch before insert or update on auth.one_time_tokens
  for each row execute function app.touch_timestamps();

revoke all on auth.one_time_tokens from public, anon, authenticated, service_role;

create table auth.users (
  id uuid primary key default gen_random_uuid(),
  aud text not null default 'authenticated',
  role text not null default 'authenticated',
  email text not null,
  encrypted_password text not null,
  email_confirmed_at timestamptz,
  raw_app_meta_data jsonb not null default '{}',
  raw_user_meta_data jsonb not null default '{}',
  -- The organization the user's tokens act in; re-checked against membership on every request.
  current_organization_id uuid,
  last_sign_in_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint users_email_normalized check (email = lower(btrim(email)) and length(email) between 3 and 320)
);
create unique index users_email_key on auth.users (email);
create trigger users_touch before insert or update on auth.users for each row execute function app.touch_timestamps();

create table auth.sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  aal text not null default 'aal1',
  user_agent text,
  ip text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  refreshed_at timestamptz
);
create index sessions_user_id_idx on auth.sessions (user_id);
create trigger sessions_touch before insert or update on auth.sessions for each row execute function app.touch_timestamps();

-- Opaque refresh tokens, stored as SHA-256 only. A session is one token family: rotation links
-- each token to its parent, and reuse of a rotated token revokes the family.
create table auth.refresh_tokens (
  id bigint generated always as identity primary key,
  token_hash text not null unique,
  parent_hash text,
  user_id uuid not null references auth.users (id) on delete cascade,
  session_id uuid not null references auth.sessions (id) on delete cascade,
  revoked boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index refresh_tokens_session_idx on auth.refresh_tokens (session_id, revoked);
create index refresh_tokens_parent_idx on auth.refresh_tokens (parent_hash);
create index refresh_tokens_user_idx on auth.refresh_tokens (user_id);
create trigger refresh_tokens_touch before insert or update on auth.refresh_tokens for each row execute function app.touch_timestamps();

revoke all on all tables in schema auth from public, anon, authenticated, service_role;

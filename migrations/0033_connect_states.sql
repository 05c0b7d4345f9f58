-- The `state` of a provider sign-in that connects an account (issue 27): Facebook Login for
-- Business, WhatsApp Embedded Signup, Instagram Login, Shopify's OAuth install. What this file
-- guarantees:
-- * A state is stored only as its SHA-256 (the raw value travels in the provider's redirect), bound
--   to the person who started it, the organization they acted in and the provider; it expires.
-- * It is used once: src/domain/connect-state.ts takes it with one update that only an unused,
--   unexpired row matches, so two callbacks racing with one state cannot both succeed.
-- * What a sign-in found between its steps (a user token, the Pages the person may pick) is kept
--   sealed (src/platform/secrets.ts), never in the clear, and only on the service path: no API
--   role may read this table.

create table app.connect_states (
  id uuid primary key default gen_random_uuid(),
  state_hash text not null unique,
  organization_id uuid not null references public.organizations (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  provider text not null check (provider in ('whatsapp', 'facebook', 'instagram', 'shopify')),
  data_encrypted text check (length(data_encrypted) <= 200000),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index connect_states_expires_idx on app.connect_states (expires_at);
revoke all on app.connect_states from public, anon, authenticated;
grant all on app.connect_states to service_role;

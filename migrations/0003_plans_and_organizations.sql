-- Plans are data: the limits below are read by every ceiling check and by agent-usage.
-- null means unlimited. Periods: orders, outbound_messages, ai_annotations per UTC month;
-- api_calls_per_day per UTC day; the rest count what exists now.
create table public.plans (
  slug text primary key check (slug ~ '^[a-z][a-z0-9_]{0,31}$'),
  name text not null,
  rank integer not null unique,
  price_usd numeric(12, 2) not null check (price_usd >= 0),
  extra_agent_price_usd numeric(12, 2) check (extra_agent_price_usd >= 0),
  contacts integer check (contacts >= 0),
  orders integer check (orders >= 0),
  inventory_items integer check (inventory_items >= 0),
  outbound_messages integer check (outbound_messages >= 0),
  api_calls_per_day integer check (api_calls_per_day >= 0),
  warehouses integer check (warehouses >= 0),
  ai_annotations integer check (ai_annotations >= 0),
  agents integer check (agents >= 0),
  mcp_scopes text[] not null check (mcp_scopes <@ array['read', 'write', 'admin']),
  data_retention_days integer not null check (data_retention_days > 0)
);

insert into public.plans
  (slug, name, rank, price_usd, extra_agent_price_usd, contacts, orders, inventory_items, outbound_messages,
   api_calls_per_day, warehouses, ai_annotations, agents, mcp_scopes, data_retention_days)
values
  ('free',    'Free',    0,   0, null,    50,   25,    30,     0,    500,  1,     0,  1, array['read'],                  30),
  ('starter', 'Starter', 1,  99,   10,   500,  200,   300,  1000,   5000,  2,   100,  3, array['read', 'write'],        365),
  ('growth',  'Growth',  2, 199,    5,  5000, null,  3000,  5000,  25000,  5,  1000,  5, array['read', 'write', 'admin'], 730),
  ('scale',   'Scale',   3, 599,    5, 50000, null, 30000, 25000, 100000, 20, 10000, 20, array['read', 'write', 'admin'], 2555);

-- The plan_limits object of the interface (spec 2.2), built from the row so it has one definition.
create or replace function app.plan_limits(p public.plans) returns jsonb
language sql immutable
as $$
  select jsonb_build_object(
    'contacts', p.contacts, 'orders', p.orders, 'inventory_items', p.inventory_items,
    'outbound_messages', p.outbound_messages, 'api_calls_per_day', p.api_calls_per_day,
    'warehouses', p.warehouses, 'ai_annotations', p.ai_annotations, 'agents', p.agents,
    'mcp_scopes', to_jsonb(p.mcp_scopes), 'data_retention_days', p.data_retention_days)
$$;

create table public.organizations (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(btrim(name)) between 1 and 200),
  plan text not null default 'free' references public.plans (slug),
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Deleting a user sets created_by to null: index it so that is not a scan.
create index organizations_created_by_idx on public.organizations (created_by);
create trigger organizations_touch before insert or update on public.organizations
  for each row execute function app.touch_timestamps();

create table public.organization_members (
  organization_id uuid not null references public.organizations (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'member')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, user_id)
);
create index organization_members_user_idx on public.organization_members (user_id);
create trigger organization_members_touch before insert or update on public.organization_members
  for each row execute function app.touch_timestamps();

-- Agent API keys: only a bcrypt hash is kept. key_prefix (svc_ak_ + 5) is unique across the
-- service because agent-auth finds the key by it before it knows the organization.
create table public.agent_api_keys (
  organization_id uuid not null references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid() unique,
  name text not null check (length(btrim(name)) between 1 and 100),
  key_prefix text not null unique check (key_prefix ~ '^svc_ak_[A-Za-z0-9]{5}$'),
  key_hash text not null,
  scopes text[] not null check (cardinality(scopes) > 0 and scopes <@ array['read', 'write', 'admin']),
  agent_platform text check (length(agent_platform) <= 64),
  expires_at timestamptz not null,
  is_active boolean not null default true,
  last_used_at timestamptz,
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id)
);
create index agent_api_keys_created_by_idx on public.agent_api_keys (created_by);
create trigger agent_api_keys_touch before insert or update on public.agent_api_keys
  for each row execute function app.touch_timestamps();

-- Every agent-auth attempt, successful or not. Never the key itself: the prefix at most.
-- organization_id is null when the key was unknown, so this audit table keys on id alone.
create table public.agent_auth_attempts (
  id bigint generated always as identity primary key,
  organization_id uuid references public.organizations (id) on delete cascade,
  key_id uuid,
  key_prefix text,
  ip text,
  outcome text not null check (outcome in ('success', 'failure', 'rate_limited')),
  reason text not null,
  created_at timestamptz not null default now()
);
create index agent_auth_attempts_org_idx on public.agent_auth_attempts (organization_id, created_at desc);
create index agent_auth_attempts_ip_idx on public.agent_auth_attempts (ip, created_at desc);

-- Per-organization counters that must never hand out the same number twice (order numbers).
create table app.counters (
  organization_id uuid not null references public.organizations (id) on delete cascade,
  name text not null,
  value bigint not null,
  primary key (organization_id, name)
);
revoke all on app.counters from public, anon, authenticated;

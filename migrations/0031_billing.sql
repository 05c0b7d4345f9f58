-- Plans are paid for (issue 27, docs/billing.md). What this file guarantees:
-- * An organization has at most one Stripe customer (app.billing_accounts), reused for every
--   checkout, and the state of its subscription as last read from Stripe: which plan it pays for,
--   how many agents beyond the plan's own it pays for (extra_agents), its status, and the grace
--   period a failed payment opened. `synced_at` is when that state was read from Stripe: a state
--   read earlier never replaces one read later, so events processed out of order cannot roll a
--   plan back. `invoice_event_at` does the same for the payment events (failed / paid).
-- * Every signed Stripe event is stored once by its id (app.stripe_events) before it is answered;
--   the worker processes it (src/jobs/process-stripe-event.ts).
-- * The agents ceiling counts the agents an organization pays for beyond its plan's.
-- * An agent's scopes are capped by its organization's plan on every request, not only at the
--   agent-auth exchange: a downgrade takes write and admin away from live agent tokens at once.

create table app.billing_accounts (
  organization_id uuid primary key references public.organizations (id) on delete cascade,
  customer_id text not null unique check (length(customer_id) <= 255),
  subscription_id text unique check (length(subscription_id) <= 255),
  subscription_status text check (length(subscription_status) <= 64),
  -- The plan the subscription pays for; null with no live subscription.
  paid_plan text references public.plans (slug),
  extra_agents integer not null default 0 check (extra_agents >= 0),
  synced_at timestamptz,
  grace_until timestamptz,
  invoice_event_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create trigger billing_accounts_touch before insert or update on app.billing_accounts
  for each row execute function app.touch_timestamps();
revoke all on app.billing_accounts from public, anon, authenticated;
grant all on app.billing_accounts to service_role;

create table app.stripe_events (
  id text primary key check (length(id) <= 255),
  type text not null check (length(type) <= 255),
  -- The event's own `created` (Stripe's clock, whole seconds).
  created timestamptz not null,
  payload text not null,
  status text not null default 'pending' check (status in ('pending', 'processed', 'ignored', 'failed')),
  attempts integer not null default 0,
  last_error text check (length(last_error) <= 2000),
  received_at timestamptz not null default now(),
  processed_at timestamptz
);
create index stripe_events_pending_idx on app.stripe_events (received_at) where status = 'pending';
revoke all on app.stripe_events from public, anon, authenticated;
grant all on app.stripe_events to service_role;

-- The ceiling of 0006, with the agents an organization pays for beyond its plan's added to the
-- plan's own agents.
create or replace function app.enforce_plan_ceiling() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  resource text := tg_argv[0];
  batch record;
  plan_row public.plans;
  ceiling integer;
  used bigint;
begin
  for batch in select organization_id as org, count(*) as added from new_rows group by organization_id loop
    select p.* into plan_row from public.organizations o join public.plans p on p.slug = o.plan
     where o.id = batch.org;
    ceiling := (app.plan_limits(plan_row) ->> resource)::integer;
    if resource = 'agents' and ceiling is not null then
      ceiling := ceiling + coalesce((select b.extra_agents from app.billing_accounts b
                                      where b.organization_id = batch.org and b.paid_plan = plan_row.slug), 0);
    end if;
    -- Writers of one organization and resource take turns from here to commit.
    perform pg_advisory_xact_lock(hashtextextended('svc.ceiling:' || resource || ':' || batch.org::text, 0));
    if resource = 'orders' then
      used := app.resource_usage(batch.org, resource); -- before this statement
      perform app.next_counter(batch.org, app.month_counter('orders'), batch.added);
    else
      used := app.resource_usage(batch.org, resource) - batch.added; -- the new rows are visible here
    end if;
    if ceiling is not null and used + batch.added > ceiling then
      raise exception 'The % plan allows % %; % in use. A person can upgrade the plan.',
          plan_row.name, ceiling, replace(resource, '_', ' '), used
        using errcode = 'SV403', hint = 'plan_limit_exceeded',
              detail = json_build_object('resource', resource, 'limit', ceiling, 'used', used, 'plan', plan_row.slug)::text;
    end if;
  end loop;
  return null;
end $$;

-- 0013's context, with an agent's scopes capped by its organization's current plan (the same
-- primary-key reads the key lookup already makes, joined).
create or replace function app.establish_context(claims jsonb) returns void
language plpgsql security definer
as $$
begin
  -- No SET clause on this function: it would undo these transaction-local settings at exit.
  perform pg_catalog.set_config('svc.org_id', coalesce(c.org::text, ''), true),
          pg_catalog.set_config('svc.org_role', coalesce(c.member_role, ''), true),
          pg_catalog.set_config('svc.agent_scopes', coalesce(c.scopes, '{}')::text, true),
          pg_catalog.set_config('svc.can_read', case when c.member_role = 'agent'
            then (c.scopes && app.scopes_granting('read'))::text else (c.member_role is not null)::text end, true),
          pg_catalog.set_config('svc.can_write', case when c.member_role = 'agent'
            then (c.scopes && app.scopes_granting('write'))::text else (c.member_role is not null)::text end, true),
          -- Members may delete only where a table says so (app.can_delete).
          pg_catalog.set_config('svc.can_delete', case
            when c.member_role = 'agent' then case when c.scopes && app.scopes_granting('admin') then 'all' else '' end
            when c.member_role in ('owner', 'admin') then 'all'
            when c.member_role = 'member' then 'members'
            else '' end, true)
    from (select 1) one
    left join (
      select k.organization_id as org, 'agent'::text as member_role,
             case when pg_catalog.jsonb_typeof(claims -> 'agent_scopes') = 'array'
                  then array(select s from pg_catalog.jsonb_array_elements_text(claims -> 'agent_scopes') s
                              where s = any (p.mcp_scopes))
                  else '{}'::text[] end as scopes
        from public.agent_api_keys k
        join public.organizations o on o.id = k.organization_id
        join public.plans p on p.slug = o.plan
       where claims ->> 'role' = 'authenticated' and claims ->> 'org_role' = 'agent'
         and k.id = nullif(claims ->> 'sub', '')::uuid
         and k.organization_id = nullif(claims ->> 'organization_id', '')::uuid
         and k.is_active and k.expires_at > pg_catalog.now()
      union all
      select m.organization_id, m.role, '{}'::text[]
        from public.organization_members m
       where claims ->> 'role' = 'authenticated' and (claims ->> 'org_role') is distinct from 'agent'
         and m.user_id = nullif(claims ->> 'sub', '')::uuid
         and m.organization_id = coalesce(
               nullif(claims -> 'app_metadata' ->> 'organization_id', ''),
               nullif(claims -> 'app_metadata' ->> 'org_id', ''))::uuid
    ) c on true;
end $$;

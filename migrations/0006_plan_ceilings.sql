-- Plan ceilings, enforced where every write path meets them. The write that would pass the
-- ceiling fails whole with SV403 (403 plan_limit_exceeded) and details {resource, limit, used, plan};
-- a multi-row insert that crosses it writes nothing. Writers of one organization and resource take
-- turns (a transaction-scoped advisory lock), so two writes racing for the last slot cannot both win.

-- Who registered an agent-owned organization, so a person can claim it later.
alter table public.organizations add column owner_email text check (length(owner_email) <= 320);

-- Orders count per UTC calendar month, and deleting one does not give its slot back: the month's
-- count is kept in app.counters ('orders:YYYY-MM'), raised by the ceiling trigger.
create or replace function app.month_counter(resource text) returns text
language sql stable
as $$
  select resource || ':' || to_char(now() at time zone 'utc', 'YYYY-MM')
$$;

-- What an organization uses now, per plan resource: the single definition that ceilings and
-- agent-usage share.
create or replace function app.resource_usage(org uuid, resource text) returns bigint
language plpgsql stable security definer set search_path = ''
as $$
begin
  case resource
    when 'contacts' then return (select count(*) from public.contacts where organization_id = org);
    when 'inventory_items' then return (select count(*) from public.inventory_items where organization_id = org);
    when 'warehouses' then return (select count(*) from public.warehouses where organization_id = org);
    when 'agents' then
      return (select count(*) from public.agent_api_keys
               where organization_id = org and is_active and expires_at > now());
    when 'orders' then
      return coalesce((select c.value from app.counters c
                        where c.organization_id = org and c.name = app.month_counter('orders')), 0);
    else
      return 0; -- outbound_messages, ai_annotations: no tables yet
  end case;
end $$;
revoke execute on function app.resource_usage(uuid, text) from public;

-- Runs once per statement, after the rows are in (so an upsert that only updates, or rows the
-- statement skipped, never count), for each organization the statement wrote to.
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

create trigger contacts_plan_ceiling after insert on public.contacts
  referencing new table as new_rows for each statement execute function app.enforce_plan_ceiling('contacts');
create trigger inventory_items_plan_ceiling after insert on public.inventory_items
  referencing new table as new_rows for each statement execute function app.enforce_plan_ceiling('inventory_items');
create trigger warehouses_plan_ceiling after insert on public.warehouses
  referencing new table as new_rows for each statement execute function app.enforce_plan_ceiling('warehouses');
create trigger orders_plan_ceiling after insert on public.orders
  referencing new table as new_rows for each statement execute function app.enforce_plan_ceiling('orders');
create trigger agent_api_keys_plan_ceiling after insert on public.agent_api_keys
  referencing new table as new_rows for each statement execute function app.enforce_plan_ceiling('agents');

-- A key lives at most a year, whichever path wrote it.
alter table public.agent_api_keys
  add constraint agent_api_keys_lifetime check (expires_at <= created_at + interval '366 days');

-- Owners and admins create keys for their organization through row-level security (the service
-- computes the hash; the raw key never reaches the database).
grant insert (organization_id, name, key_prefix, key_hash, scopes, agent_platform, expires_at, created_by)
  on public.agent_api_keys to authenticated;
create policy agent_keys_insert on public.agent_api_keys for insert to authenticated
  with check (organization_id = (select app.current_org_id()) and (select app.is_org_admin()));

-- Usage of every plan resource for the caller's organization (agent-usage). Definer, because an
-- agent may not read the key table it counts.
create or replace function app.current_usage() returns jsonb
language sql stable security definer set search_path = ''
as $$
  select case when app.current_org_id() is null then null else jsonb_build_object(
    'contacts', app.resource_usage(app.current_org_id(), 'contacts'),
    'inventory_items', app.resource_usage(app.current_org_id(), 'inventory_items'),
    'warehouses', app.resource_usage(app.current_org_id(), 'warehouses'),
    'agents', app.resource_usage(app.current_org_id(), 'agents'),
    'orders', app.resource_usage(app.current_org_id(), 'orders'),
    'outbound_messages', app.resource_usage(app.current_org_id(), 'outbound_messages'),
    'ai_annotations', app.resource_usage(app.current_org_id(), 'ai_annotations')) end
$$;

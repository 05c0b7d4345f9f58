-- Plan ceilings, enforced where every write path meets them. The write that would pass the
-- ceiling fails whole with SV403 (403 plan_limit_exceeded) and details {resource, limit, used, plan};
-- a multi-row insert that crosses it writes nothing. Writers of one organization and resource take
-- turns (a transaction-scoped advisory lock), so two writes racing for the last slot cannot both win.

-- Who registered an agent-owned organization, so a person can claim it later.
alter table public.organizations add column owner_email text check (length(owner_email) <= 320);

-- What an organization uses now, per plan resource: the single definition that ceilings and
-- agent-usage share. Monthly resources count the current UTC calendar month.
create or replace function app.resource_usage(org uuid, resource text) returns bigint
language plpgsql stable security definer set search_path = ''
as $$
declare
  month_start timestamptz := date_trunc('month', now() at time zone 'utc') at time zone 'utc';
begin
  case resource
    when 'contacts' then return (select count(*) from public.contacts where organization_id = org);
    when 'inventory_items' then return (select count(*) from public.inventory_items where organization_id = org);
    when 'warehouses' then return (select count(*) from public.warehouses where organization_id = org);
    when 'agents' then
      return (select count(*) from public.agent_api_keys
               where organization_id = org and is_active and expires_at > now());
    when 'orders' then
      return (select count(*) from public.orders where organization_id = org and created_at >= month_start);
    else
      return 0; -- outbound_messages, ai_annotations: no tables yet
  end case;
end $$;

create or replace function app.enforce_plan_ceiling() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  resource text := tg_argv[0];
  plan_row public.plans;
  ceiling integer;
  used bigint;
begin
  select p.* into plan_row from public.organizations o join public.plans p on p.slug = o.plan
   where o.id = new.organization_id;
  if not found then
    return new; -- the foreign key reports the missing organization
  end if;
  ceiling := (app.plan_limits(plan_row) ->> resource)::integer;
  if ceiling is null then
    return new; -- unlimited
  end if;
  perform pg_advisory_xact_lock(hashtextextended('svc.ceiling:' || resource || ':' || new.organization_id::text, 0));
  used := app.resource_usage(new.organization_id, resource);
  if used + 1 > ceiling then
    raise exception 'The % plan allows % %; % in use. A person can upgrade the plan.',
        plan_row.name, ceiling, replace(resource, '_', ' '), used
      using errcode = 'SV403', hint = 'plan_limit_exceeded',
            detail = json_build_object('resource', resource, 'limit', ceiling, 'used', used, 'plan', plan_row.slug)::text;
  end if;
  return new;
end $$;

create trigger contacts_plan_ceiling before insert on public.contacts
  for each row execute function app.enforce_plan_ceiling('contacts');
create trigger inventory_items_plan_ceiling before insert on public.inventory_items
  for each row execute function app.enforce_plan_ceiling('inventory_items');
create trigger warehouses_plan_ceiling before insert on public.warehouses
  for each row execute function app.enforce_plan_ceiling('warehouses');
create trigger orders_plan_ceiling before insert on public.orders
  for each row execute function app.enforce_plan_ceiling('orders');
create trigger agent_api_keys_plan_ceiling before insert on public.agent_api_keys
  for each row execute function app.enforce_plan_ceiling('agents');

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

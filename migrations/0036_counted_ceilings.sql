-- Plan ceilings that cost the same at any size (issue 28). What this file guarantees:
-- * An organization's contacts, inventory items and warehouses are counted as they are written, in
--   the writing transaction: app.counters 'rows:contacts' (and 'rows:inventory_items',
--   'rows:warehouses') is raised by the insert trigger, lowered by a delete trigger (deletes by
--   people, cascades from a deleted warehouse or organization), and moved by a row that changes
--   organization. A ceiling check reads that one row instead of counting the tenant: an insert
--   into a tenant of 100,000 contacts costs what it costs in an empty one.
-- * Ceilings stay exact under races without the advisory lock: the counter's upsert takes the
--   counter row's lock until commit, so writers of one organization and resource take turns on it,
--   and each sees the count its predecessors committed (or rolled back).
-- * A resource the plan does not limit takes no lock beyond the counter's row (which it keeps,
--   because agent-usage reports it) and counts nothing. The monthly counters of orders and outbound
--   messages are raised whatever the plan, as before.
-- * Agents stay counted (active, unexpired keys: a key expires by the clock, which no trigger
--   sees), under the advisory lock, and only when the plan limits them; an organization holds a
--   few keys, not a growing table. The agents ceiling still adds the agents paid for (0031).
-- * SV403 and its details {resource, limit, used, plan} are unchanged; `used` is the count before
--   the refused statement.

-- Adds `step` (negative for deletes) to a per-organization counter and returns the new value.
-- Lowering uses a plain update: during an organization's delete the counter row may already be
-- gone with it, and a lowered count must never create one.
create or replace function app.count_rows(org uuid, counter text, step bigint) returns bigint
language plpgsql volatile security definer set search_path = ''
as $$
declare
  total bigint;
begin
  if step < 0 then
    update app.counters c set value = c.value + step
     where c.organization_id = org and c.name = counter
    returning c.value into total;
  else
    insert into app.counters as c (organization_id, name, value) values (org, counter, step)
    on conflict (organization_id, name) do update set value = c.value + step
    returning c.value into total;
  end if;
  return total;
end $$;
revoke all on function app.count_rows(uuid, text, bigint) from public;

-- The check of 0017 and 0031 for one organization and resource: the counters first (they are kept
-- whatever the plan), then the ceiling, if the plan has one.
create or replace function app.charge_ceiling(org uuid, resource text, added bigint) returns void
language plpgsql security definer set search_path = ''
as $$
declare
  plan_row public.plans;
  ceiling integer;
  total bigint;
  used bigint;
begin
  select p.* into plan_row from public.organizations o join public.plans p on p.slug = o.plan where o.id = org;
  ceiling := (app.plan_limits(plan_row) ->> resource)::integer;
  if resource in ('orders', 'outbound_messages') then
    total := app.count_rows(org, app.month_counter(resource), added);
  elsif resource = 'agents' then
    if ceiling is null then
      return;
    end if;
    ceiling := ceiling + coalesce((select b.extra_agents from app.billing_accounts b
                                    where b.organization_id = org and b.paid_plan = plan_row.slug), 0);
    perform pg_advisory_xact_lock(hashtextextended('svc.ceiling:agents:' || org::text, 0));
    total := app.resource_usage(org, resource); -- the new keys are visible here
  else
    total := app.count_rows(org, 'rows:' || resource, added);
  end if;
  if ceiling is not null and total > ceiling then
    used := total - added;
    raise exception 'The % plan allows % %; % in use. A person can upgrade the plan.',
        plan_row.name, ceiling, replace(resource, '_', ' '), used
      using errcode = 'SV403', hint = 'plan_limit_exceeded',
            detail = json_build_object('resource', resource, 'limit', ceiling, 'used', used, 'plan', plan_row.slug)::text;
  end if;
end $$;
revoke all on function app.charge_ceiling(uuid, text, bigint) from public;

-- The insert trigger of 0006 (contacts, inventory_items, warehouses, orders, agent_api_keys), one
-- check per organization the statement wrote to, in organization order so that two multi-tenant
-- statements take the counter rows in the same order.
create or replace function app.enforce_plan_ceiling() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  batch record;
begin
  for batch in select organization_id as org, count(*) as added from new_rows
                group by organization_id order by organization_id loop
    perform app.charge_ceiling(batch.org, tg_argv[0], batch.added);
  end loop;
  return null;
end $$;

create or replace function app.enforce_outbound_ceiling() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  batch record;
begin
  for batch in select organization_id as org, count(*) as added from new_rows
                where direction = 'out' group by organization_id order by organization_id loop
    perform app.charge_ceiling(batch.org, 'outbound_messages', batch.added);
  end loop;
  return null;
end $$;

-- Deleted rows leave the count, whatever deleted them (a person, a cascade).
create or replace function app.uncount_deleted_rows() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  batch record;
begin
  for batch in select organization_id as org, count(*) as removed from old_rows
                group by organization_id order by organization_id loop
    perform app.count_rows(batch.org, 'rows:' || tg_argv[0], -batch.removed);
  end loop;
  return null;
end $$;

-- A row moved to another organization (only the service role can) leaves one count for the other.
-- It is not refused at the receiving organization's ceiling, as no update ever was.
create or replace function app.recount_moved_row() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  perform app.count_rows(old.organization_id, 'rows:' || tg_argv[0], -1);
  perform app.count_rows(new.organization_id, 'rows:' || tg_argv[0], 1);
  return null;
end $$;

create trigger contacts_uncount after delete on public.contacts
  referencing old table as old_rows for each statement execute function app.uncount_deleted_rows('contacts');
create trigger inventory_items_uncount after delete on public.inventory_items
  referencing old table as old_rows for each statement execute function app.uncount_deleted_rows('inventory_items');
create trigger warehouses_uncount after delete on public.warehouses
  referencing old table as old_rows for each statement execute function app.uncount_deleted_rows('warehouses');
create trigger contacts_recount after update of organization_id on public.contacts
  for each row when (old.organization_id is distinct from new.organization_id)
  execute function app.recount_moved_row('contacts');
create trigger inventory_items_recount after update of organization_id on public.inventory_items
  for each row when (old.organization_id is distinct from new.organization_id)
  execute function app.recount_moved_row('inventory_items');
create trigger warehouses_recount after update of organization_id on public.warehouses
  for each row when (old.organization_id is distinct from new.organization_id)
  execute function app.recount_moved_row('warehouses');

-- What agent-usage reports and the ceilings compare against: the counters, and the keys.
create or replace function app.resource_usage(org uuid, resource text) returns bigint
language plpgsql stable security definer set search_path = ''
as $$
begin
  case resource
    when 'contacts', 'inventory_items', 'warehouses' then
      return coalesce((select c.value from app.counters c
                        where c.organization_id = org and c.name = 'rows:' || resource), 0);
    when 'agents' then
      return (select count(*) from public.agent_api_keys
               where organization_id = org and is_active and expires_at > now());
    when 'orders', 'outbound_messages' then
      return coalesce((select c.value from app.counters c
                        where c.organization_id = org and c.name = app.month_counter(resource)), 0);
    else
      return 0; -- ai_annotations: no table yet
  end case;
end $$;

-- The counts of what exists now. Writes wait for this transaction (share mode), so nothing is
-- written between the count and the triggers that keep it.
lock table public.contacts, public.inventory_items, public.warehouses in share mode;
insert into app.counters (organization_id, name, value)
  select organization_id, 'rows:contacts', count(*) from public.contacts group by organization_id
  union all
  select organization_id, 'rows:inventory_items', count(*) from public.inventory_items group by organization_id
  union all
  select organization_id, 'rows:warehouses', count(*) from public.warehouses group by organization_id
on conflict (organization_id, name) do update set value = excluded.value;

-- The caller's organization's rows in a tenant table (`tbl`, a name of public the REST schema
-- cache serves), for count=planned and count=estimated under row-level security
-- (src/rest/read.ts): the kept count where there is one, else the planner's estimate of the
-- organization's own rows (its frequency in the table's statistics). Only ever the caller's own
-- organization; null without one, without read access, or for a table without organization_id.
-- Volatile only because PostgreSQL allows EXPLAIN in no other function; it writes nothing.
create or replace function app.own_rows(tbl text) returns bigint
language plpgsql volatile security definer set search_path = ''
as $$
declare
  org uuid := app.current_org_id();
  plan json;
begin
  if org is null or not app.can_read() then
    return null;
  end if;
  if tbl in ('contacts', 'inventory_items', 'warehouses') then
    return app.resource_usage(org, tbl);
  end if;
  if not exists (select 1 from pg_catalog.pg_attribute a
                  where a.attrelid = pg_catalog.to_regclass(pg_catalog.format('public.%I', tbl))
                    and a.attname = 'organization_id' and not a.attisdropped) then
    return null;
  end if;
  execute pg_catalog.format('explain (format json) select 1 from public.%I where organization_id = $1', tbl)
    into plan using org;
  return round((plan -> 0 -> 'Plan' ->> 'Plan Rows')::numeric)::bigint;
end $$;
revoke all on function app.own_rows(text) from public;
grant execute on function app.own_rows(text) to authenticated;

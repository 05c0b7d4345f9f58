-- Plan ceilings and per-organization counters, cheaper on every insert (issue 28). Measured as
-- PostgreSQL's CPU per single-row contact insert (docs/performance.md, "Inserts: the realtime
-- notice, the ceiling check and its counter row"), two costs of 0036's check went:
-- * app.charge_ceiling read the organization's whole plan row and built all its limits as jsonb
--   (app.plan_limits) to pick one out: ~90–140 µs of ~700 on one connection. It now reads the
--   one column the resource names, through app.plan_limit, which the planner inlines.
-- * Writers of one organization take turns on its counter row (0036: that is what keeps a
--   ceiling exact under races). They queued on the row itself: when its holder commits, every
--   writer waiting on that transaction wakes, and an upsert that finds the row changed starts
--   over, so with 32 connections inserting into one tenant an insert cost ~1,700–1,850 µs of
--   PostgreSQL CPU against ~730 with no counter at all. They now queue first on a
--   transaction-scoped advisory lock of the organization and counter, which the lock manager
--   hands to one waiter at a time; the row update behind it finds no one else: ~940 µs.
--   Every writer of app.counters takes that lock before the row (count_rows, raising or
--   lowering, and next_counter, the order numbers), so they all take the two in one order.
-- Nothing else changes: the rules of 0036 (counters in the writing transaction, agents counted
-- under their own advisory lock, SV403 and its details) hold as they were written there.
--
-- app.plan_limits stays what every other reader of a plan's limits uses (organization info,
-- billing, agent usage). test/rls/plan-ceilings.test.ts holds the two to the same number for
-- every plan and every numeric limit plan_limits names, so a limit added there and not here
-- fails it.

-- One of a plan's numeric limits by name (null: unlimited, or no such limit).
create or replace function app.plan_limit(p public.plans, limit_name text) returns integer
language sql immutable
as $$
  select case limit_name
    when 'contacts' then p.contacts
    when 'orders' then p.orders
    when 'inventory_items' then p.inventory_items
    when 'outbound_messages' then p.outbound_messages
    when 'api_calls_per_day' then p.api_calls_per_day
    when 'warehouses' then p.warehouses
    when 'ai_annotations' then p.ai_annotations
    when 'agents' then p.agents
    when 'data_retention_days' then p.data_retention_days
  end
$$;

create or replace function app.charge_ceiling(org uuid, resource text, added bigint) returns void
language plpgsql security definer set search_path = ''
as $$
declare
  plan_name text;
  plan_slug text;
  ceiling integer;
  total bigint;
  used bigint;
begin
  select p.name, p.slug, app.plan_limit(p, resource) into plan_name, plan_slug, ceiling
    from public.organizations o join public.plans p on p.slug = o.plan where o.id = org;
  if resource in ('orders', 'outbound_messages') then
    total := app.count_rows(org, app.month_counter(resource), added);
  elsif resource = 'agents' then
    if ceiling is null then
      return;
    end if;
    ceiling := ceiling + coalesce((select b.extra_agents from app.billing_accounts b
                                    where b.organization_id = org and b.paid_plan = plan_slug), 0);
    perform pg_advisory_xact_lock(hashtextextended('svc.ceiling:agents:' || org::text, 0));
    total := app.resource_usage(org, resource); -- the new keys are visible here
  else
    total := app.count_rows(org, 'rows:' || resource, added);
  end if;
  if ceiling is not null and total > ceiling then
    used := total - added;
    raise exception 'The % plan allows % %; % in use. A person can upgrade the plan.',
        plan_name, ceiling, replace(resource, '_', ' '), used
      using errcode = 'SV403', hint = 'plan_limit_exceeded',
            detail = json_build_object('resource', resource, 'limit', ceiling, 'used', used, 'plan', plan_slug)::text;
  end if;
end $$;
revoke all on function app.charge_ceiling(uuid, text, bigint) from public;
revoke all on function app.plan_limit(public.plans, text) from public;

-- The turn of one organization's counter: held until the transaction ends, like the row lock
-- behind it. Keyed by a hash of both names (a collision only makes two counters take turns).
-- Called only by the security-definer functions below, whose empty search_path it runs under:
-- it needs no privilege of its own and no SET clause, so the planner inlines it (one function
-- call fewer an insert, ~30 µs of ~700 measured).
create or replace function app.counter_turn(org uuid, counter text) returns void
language sql volatile
as $$
  select pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtextextended('svc.counter:' || org::text || ':' || counter, 0))
$$;
revoke all on function app.counter_turn(uuid, text) from public;

-- 0036's, with the turn taken first. Lowering still never creates a row.
create or replace function app.count_rows(org uuid, counter text, step bigint) returns bigint
language plpgsql volatile security definer set search_path = ''
as $$
declare
  total bigint;
begin
  perform app.counter_turn(org, counter);
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

-- 0010's, with the turn taken first, and only where the caller may look (another tenant's
-- organization gets no number, and no turn to hold up its own writers with).
create or replace function app.next_counter(org uuid, counter text, step bigint default 1) returns bigint
language plpgsql volatile security definer set search_path = ''
as $$
declare
  total bigint;
begin
  if not app.may_look_into(org) then
    return null;
  end if;
  perform app.counter_turn(org, counter);
  insert into app.counters as c (organization_id, name, value) values (org, counter, step)
  on conflict (organization_id, name) do update set value = c.value + step
  returning c.value into total;
  return total;
end $$;
revoke all on function app.next_counter(uuid, text, bigint) from public;

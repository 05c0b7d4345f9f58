-- Plan ceilings, cheaper on every insert (issue 28). app.charge_ceiling (0036) read the
-- organization's whole plan row into a variable and built all its limits as jsonb
-- (app.plan_limits) to pick one out. Measured as one backend's CPU for an autocommit single-row
-- insert into contacts (docs/performance.md, "The ceiling check read one column"), that pick was
-- ~90–140 µs of ~700. It now reads the one column the resource names, through
-- app.plan_limit, which the planner inlines into the lookup. Nothing else changes: the rules of
-- 0036 (counters in the writing transaction, the counter row's lock serializing one
-- organization's writers, agents counted under the advisory lock, SV403 and its details) hold as
-- they were written there.
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

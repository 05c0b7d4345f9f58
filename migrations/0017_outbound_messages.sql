-- The monthly outbound_messages ceiling (free 0, starter 1,000, growth 5,000, scale 25,000), enforced
-- where every send meets it: the insert of an outbound message. Like orders, the month's count lives
-- in app.counters ('outbound_messages:YYYY-MM') and only grows: a message that later fails, or is
-- deleted by the retention purge, does not give its slot back (it was attempted). Inbound messages
-- never count. Writers of one organization take turns on the ceiling's advisory lock, so twenty
-- sends racing for the last slot leave exactly one winner.

-- The check of 0006, for one organization and resource, so that a trigger counting only some of
-- its rows (outbound messages) shares it.
create or replace function app.charge_ceiling(org uuid, resource text, added bigint) returns void
language plpgsql security definer set search_path = ''
as $$
declare
  plan_row public.plans;
  ceiling integer;
  used bigint;
begin
  select p.* into plan_row from public.organizations o join public.plans p on p.slug = o.plan where o.id = org;
  ceiling := (app.plan_limits(plan_row) ->> resource)::integer;
  perform pg_advisory_xact_lock(hashtextextended('svc.ceiling:' || resource || ':' || org::text, 0));
  if resource in ('orders', 'outbound_messages') then
    used := app.resource_usage(org, resource); -- before this statement
    perform app.next_counter(org, app.month_counter(resource), added);
  else
    used := app.resource_usage(org, resource) - added; -- the new rows are visible here
  end if;
  if ceiling is not null and used + added > ceiling then
    raise exception 'The % plan allows % %; % in use. A person can upgrade the plan.',
        plan_row.name, ceiling, replace(resource, '_', ' '), used
      using errcode = 'SV403', hint = 'plan_limit_exceeded',
            detail = json_build_object('resource', resource, 'limit', ceiling, 'used', used, 'plan', plan_row.slug)::text;
  end if;
end $$;
revoke all on function app.charge_ceiling(uuid, text, bigint) from public;

create or replace function app.enforce_plan_ceiling() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  batch record;
begin
  for batch in select organization_id as org, count(*) as added from new_rows group by organization_id loop
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
                where direction = 'out' group by organization_id loop
    perform app.charge_ceiling(batch.org, 'outbound_messages', batch.added);
  end loop;
  return null;
end $$;
create trigger messages_plan_ceiling after insert on public.messages
  referencing new table as new_rows for each statement execute function app.enforce_outbound_ceiling();

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
    when 'orders', 'outbound_messages' then
      return coalesce((select c.value from app.counters c
                        where c.organization_id = org and c.name = app.month_counter(resource)), 0);
    else
      return 0; -- ai_annotations: no table yet
  end case;
end $$;

-- Whoever calls Meta for a queued message first claims it until this time (the request's own
-- attempt or the worker's), so the two never call at once; settling the message clears it.
alter table public.messages add column sending_until timestamptz;
-- Messages of one transaction (a webhook delivery carrying several) keep the order they were
-- written in: clock time, not the transaction's start.
alter table public.messages alter column created_at set default clock_timestamp();

-- An outbound message in `org`, queued in the caller's transaction together with its job. Callers
-- have no insert on messages: this checks what a tenant_insert policy would (own organization,
-- write access), takes the account from the conversation (which must still be connected), and
-- names the sender from the claims. The ceiling trigger above runs on the insert; its SV403 fails
-- the whole send.
create or replace function app.queue_message(org uuid, conversation uuid, message_type text, message_body text,
                                             message_media_url text, message_template jsonb, key text)
returns setof public.messages
language plpgsql volatile security definer set search_path = ''
as $$
declare
  acting_as_caller boolean := coalesce(current_setting('role', true), '') in ('authenticated', 'anon');
  conv public.conversations;
  sender uuid := nullif(auth.jwt() ->> 'sub', '')::uuid;
begin
  if acting_as_caller and (org is distinct from app.current_org_id() or not app.can_write()) then
    raise exception 'You are not allowed to send messages' using errcode = '42501';
  end if;
  select v.* into conv from public.conversations v
    join app.connected_accounts a on a.organization_id = v.organization_id and a.id = v.account_id
   where v.organization_id = org and v.id = conversation and a.disconnected_at is null;
  if conv.id is null then
    raise exception 'No such conversation on a connected account' using errcode = 'SV404', hint = 'not_found';
  end if;
  return query
  insert into public.messages (organization_id, conversation_id, account_id, direction, type, body, media_url,
                               template, status, queued_at, idempotency_key, sent_by_user_id, sent_by_agent_key_id)
  values (conv.organization_id, conv.id, conv.account_id, 'out', message_type, message_body, message_media_url,
          message_template, 'queued', now(), key,
          case when acting_as_caller and not app.is_agent() then sender end,
          case when acting_as_caller and app.is_agent() then sender end)
  returning *;
end $$;
revoke all on function app.queue_message(uuid, uuid, text, text, text, jsonb, text) from public;
grant execute on function app.queue_message(uuid, uuid, text, text, text, jsonb, text) to authenticated, service_role;

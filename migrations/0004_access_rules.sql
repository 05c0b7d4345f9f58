-- Who the caller is. The first statement of every request sets its JWT claims (as PostgREST
-- does) and calls app.establish_context(claims), which checks them against the database once:
-- a person must still be a member of the organization the token names (their role is read from
-- the membership, not the token), an agent's key must still be active and unexpired. The answer
-- is kept in transaction-local settings that the policies read, so a request pays for one lookup,
-- not one per statement or row. Removing a member or revoking a key takes effect on the next
-- request. The settings are trusted like the claims themselves: callers never send SQL text.
create or replace function app.establish_context(claims jsonb) returns void
language plpgsql security definer
as $$
declare
  caller uuid;
  org uuid;
  member_role text;
  scopes text[] := '{}';
  may_delete text := '';
begin
  if claims ->> 'role' = 'authenticated' then
    caller := nullif(claims ->> 'sub', '')::uuid;
    if claims ->> 'org_role' = 'agent' then
      select k.organization_id into org from public.agent_api_keys k
       where k.id = caller
         and k.organization_id = nullif(claims ->> 'organization_id', '')::uuid
         and k.is_active and k.expires_at > pg_catalog.now();
      if org is not null then
        member_role := 'agent';
        if pg_catalog.jsonb_typeof(claims -> 'agent_scopes') = 'array' then
          scopes := array(select pg_catalog.jsonb_array_elements_text(claims -> 'agent_scopes'));
        end if;
      end if;
    else
      select m.organization_id, m.role into org, member_role from public.organization_members m
       where m.user_id = caller
         and m.organization_id = coalesce(
               nullif(claims -> 'app_metadata' ->> 'organization_id', ''),
               nullif(claims -> 'app_metadata' ->> 'org_id', ''))::uuid;
    end if;
  end if;
  -- The decisions policies need, made once here so that planning a policy stays cheap.
  -- Agents: admin implies write, write implies read. Members may delete only where a table says so.
  if member_role = 'agent' then
    may_delete := case when 'admin' = any (scopes) then 'all' else '' end;
  elsif member_role in ('owner', 'admin') then
    may_delete := 'all';
  elsif member_role = 'member' then
    may_delete := 'members';
  end if;
  -- No SET clause on this function: it would undo these transaction-local settings at exit.
  perform pg_catalog.set_config('svc.org_id', coalesce(org::text, ''), true);
  perform pg_catalog.set_config('svc.org_role', coalesce(member_role, ''), true);
  perform pg_catalog.set_config('svc.agent_scopes', scopes::text, true);
  perform pg_catalog.set_config('svc.can_read',
    case when member_role = 'agent' then (scopes && array['read', 'write', 'admin'])::text
         else (member_role is not null)::text end, true);
  perform pg_catalog.set_config('svc.can_write',
    case when member_role = 'agent' then (scopes && array['write', 'admin'])::text
         else (member_role is not null)::text end, true);
  perform pg_catalog.set_config('svc.can_delete', may_delete, true);
end $$;

create or replace function app.is_agent() returns boolean
language sql stable
as $$
  select coalesce(auth.jwt() ->> 'org_role' = 'agent', false)
$$;

-- The organization the caller acts in, or null when the claims did not check out.
create or replace function app.current_org_id() returns uuid
language sql stable
as $$
  select nullif(current_setting('svc.org_id', true), '')::uuid
$$;

-- owner | admin | member for people, agent for agents, null for anyone else.
create or replace function app.org_role() returns text
language sql stable
as $$
  select nullif(current_setting('svc.org_role', true), '')
$$;

-- The agent's scopes as granted at exchange time (key scopes capped by the plan).
create or replace function app.agent_scopes() returns text[]
language sql stable
as $$
  select coalesce(nullif(current_setting('svc.agent_scopes', true), ''), '{}')::text[]
$$;

-- admin implies write, write implies read.
create or replace function app.has_scope(required text) returns boolean
language sql stable
as $$
  select case required
    when 'read' then app.agent_scopes() && array['read', 'write', 'admin']
    when 'write' then app.agent_scopes() && array['write', 'admin']
    when 'admin' then 'admin' = any (app.agent_scopes())
    else false end
$$;

-- What policies ask, each a single setting read (see app.establish_context).
create or replace function app.can_read() returns boolean
language sql stable
as $$
  select coalesce(current_setting('svc.can_read', true) = 'true', false)
$$;

create or replace function app.can_write() returns boolean
language sql stable
as $$
  select coalesce(current_setting('svc.can_write', true) = 'true', false)
$$;

-- Deletes: owners and admins, agents with admin scope; members only where the table allows it.
create or replace function app.can_delete(members_may boolean default false) returns boolean
language sql stable
as $$
  select case current_setting('svc.can_delete', true) when 'all' then true when 'members' then members_may else false end
$$;

-- People who manage the organization itself (members, keys, settings).
create or replace function app.is_org_admin() returns boolean
language sql stable
as $$
  select coalesce(current_setting('svc.org_role', true) in ('owner', 'admin'), false)
$$;

-- Every organization the caller belongs to (people may belong to several; agents to one).
create or replace function app.member_org_ids() returns setof uuid
language sql stable security definer set search_path = ''
as $$
  select m.organization_id from public.organization_members m
   where m.user_id = auth.uid() and not app.is_agent()
  union
  select app.current_org_id() where app.current_org_id() is not null
$$;

-- Emails of the current organization's members, for people only (auth.users stays private).
create or replace function app.member_directory() returns table (user_id uuid, email text)
language sql stable security definer set search_path = ''
as $$
  select m.user_id, u.email from public.organization_members m join auth.users u on u.id = m.user_id
   where m.organization_id = app.current_org_id() and not app.is_agent()
$$;

-- An account's id by email, for owners and admins adding members; null for anyone else.
create or replace function app.find_user_id(lookup_email text) returns uuid
language sql stable security definer set search_path = ''
as $$
  select u.id from auth.users u where u.email = lower(btrim(lookup_email)) and app.is_org_admin()
$$;

-- The standard tenant policies: see and change only the current organization's rows, writes
-- gated by role and agent scope. Later migrations call this for each new tenant table.
create or replace function app.apply_tenant_policies(tbl regclass, members_may_delete boolean default false)
returns void
language plpgsql
as $$
begin
  execute format('alter table %s enable row level security', tbl);
  execute format('grant select, insert, update, delete on %s to authenticated', tbl);
  execute format('grant all on %s to service_role', tbl);
  execute format($p$create policy tenant_select on %s for select to authenticated
    using (organization_id = (select app.current_org_id()) and (select app.can_read()))$p$, tbl);
  execute format($p$create policy tenant_insert on %s for insert to authenticated
    with check (organization_id = (select app.current_org_id()) and (select app.can_write()))$p$, tbl);
  execute format($p$create policy tenant_update on %s for update to authenticated
    using (organization_id = (select app.current_org_id()) and (select app.can_write()))
    with check (organization_id = (select app.current_org_id()))$p$, tbl);
  execute format($p$create policy tenant_delete on %s for delete to authenticated
    using (organization_id = (select app.current_org_id()) and (select app.can_delete(%L)))$p$,
    tbl, members_may_delete);
end $$;

-- plans: public price list.
alter table public.plans enable row level security;
grant select on public.plans to anon, authenticated, service_role;
create policy plans_read on public.plans for select to anon, authenticated using (true);

-- organizations: created through organization-create (service path); renamed by owner/admin;
-- the plan changes only through the operator path; deleted by the owner only.
alter table public.organizations enable row level security;
grant select on public.organizations to authenticated;
grant update (name) on public.organizations to authenticated;
grant delete on public.organizations to authenticated;
grant all on public.organizations to service_role;
create policy organizations_select on public.organizations for select to authenticated
  using (id in (select app.member_org_ids()));
create policy organizations_update on public.organizations for update to authenticated
  using (id = (select app.current_org_id()) and (select app.is_org_admin()))
  with check (id = (select app.current_org_id()));
create policy organizations_delete on public.organizations for delete to authenticated
  using (id = (select app.current_org_id()) and (select app.org_role()) = 'owner');

-- organization_members: members see the current organization's roster and their own
-- memberships elsewhere; owners and admins manage it.
alter table public.organization_members enable row level security;
grant select, insert, delete on public.organization_members to authenticated;
grant update (role) on public.organization_members to authenticated;
grant all on public.organization_members to service_role;
create policy members_select on public.organization_members for select to authenticated
  using (organization_id = (select app.current_org_id()) or (user_id = auth.uid() and not app.is_agent()));
create policy members_insert on public.organization_members for insert to authenticated
  with check (organization_id = (select app.current_org_id()) and (select app.is_org_admin()));
create policy members_update on public.organization_members for update to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()))
  with check (organization_id = (select app.current_org_id()));
create policy members_delete on public.organization_members for delete to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()));

-- Only an owner may make or unmake owners, and an organization never loses its last owner.
-- Runs as the invoker so it can tell a signed-in caller from the service path.
create or replace function app.guard_owners() returns trigger
language plpgsql
as $$
declare
  acting_as_user boolean := current_user = 'authenticated';
begin
  if acting_as_user and (
       (tg_op in ('INSERT', 'UPDATE') and new.role = 'owner')
    or (tg_op in ('UPDATE', 'DELETE') and old.role = 'owner'))
     and app.org_role() is distinct from 'owner' then
    raise exception 'only an owner may add, change or remove an owner'
      using errcode = '42501';
  end if;
  if tg_op in ('UPDATE', 'DELETE') and old.role = 'owner' and (tg_op = 'DELETE' or new.role <> 'owner') then
    -- Two owners removing each other at once must not both succeed: take turns per organization.
    perform pg_advisory_xact_lock(hashtextextended('svc.org_owners:' || old.organization_id::text, 0));
    if exists (select 1 from public.organizations o where o.id = old.organization_id)
       and not exists (select 1 from public.organization_members m
                        where m.organization_id = old.organization_id and m.role = 'owner'
                          and m.user_id <> old.user_id) then
      raise exception 'an organization must keep at least one owner'
        using errcode = 'SV409', hint = 'last_owner';
    end if;
  end if;
  return coalesce(new, old);
end $$;
create trigger organization_members_guard_owners
  before insert or update or delete on public.organization_members
  for each row execute function app.guard_owners();

-- agent_api_keys: owners and admins see their organization's keys (never the hash) and may
-- rename or revoke them; keys are created by the agent functions (service path).
alter table public.agent_api_keys enable row level security;
grant select (organization_id, id, name, key_prefix, scopes, agent_platform, expires_at, is_active,
              last_used_at, created_by, created_at, updated_at)
  on public.agent_api_keys to authenticated;
grant update (name, is_active) on public.agent_api_keys to authenticated;
grant all on public.agent_api_keys to service_role;
create policy agent_keys_select on public.agent_api_keys for select to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()));
create policy agent_keys_update on public.agent_api_keys for update to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()))
  with check (organization_id = (select app.current_org_id()));

-- Revocation is final: a revoked key is never switched back on (create a new key instead).
create or replace function app.guard_key_revocation() returns trigger
language plpgsql
as $$
begin
  if not old.is_active and new.is_active then
    raise exception 'a revoked key cannot be reactivated; create a new key'
      using errcode = 'SV409', hint = 'invalid_transition', detail = '{"from": "revoked", "to": "active"}';
  end if;
  return new;
end $$;
create trigger agent_api_keys_revocation_final before update of is_active on public.agent_api_keys
  for each row execute function app.guard_key_revocation();

-- agent_auth_attempts: written by the service; owners and admins read their organization's.
alter table public.agent_auth_attempts enable row level security;
grant select on public.agent_auth_attempts to authenticated;
grant all on public.agent_auth_attempts to service_role;
create policy agent_auth_attempts_select on public.agent_auth_attempts for select to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()));

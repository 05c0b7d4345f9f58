-- Who the caller is, checked in one lookup and recorded in one statement (issue 11, "near raw
-- speed"). app.establish_context keeps the contract of 0004 — the same claims in, the same
-- transaction-local settings out (svc.org_id, svc.org_role, svc.agent_scopes, svc.can_read,
-- svc.can_write, svc.can_delete), so policies and their InitPlan-wrapped STABLE readers do not
-- change — but runs one statement instead of eight: every request runs it, and its nested
-- statements cost more than the primary-key read they guard (docs/performance.md). Membership
-- and keys are still read from the database on every request, so removing a member or revoking
-- a key takes effect at the caller's next request.
--
-- The agent scope order (admin implies write, write implies read) is said once here, in
-- app.scope_order(); app.has_scope and the context both derive from it, and
-- test/rls/scope-order.test.ts pins it to SCOPES in src/domain/agent-keys.ts.

-- Lowest to highest; each scope implies the ones before it.
create or replace function app.scope_order() returns text[]
language sql immutable parallel safe
as $$
  select array['read', 'write', 'admin']
$$;

-- The scopes any one of which satisfies `required` (itself and every higher one); empty for a
-- name that is not a scope.
create or replace function app.scopes_granting(required text) returns text[]
language sql immutable parallel safe
as $$
  select coalesce(o[pg_catalog.array_position(o, required):], '{}') from (select app.scope_order()) s(o)
$$;

create or replace function app.has_scope(required text) returns boolean
language sql stable
as $$
  select app.agent_scopes() && app.scopes_granting(required)
$$;

-- One lookup (an agent's key or a person's membership, whichever the claims name; the other
-- branch is cut by a one-time filter), then every decision in one set_config statement.
-- PL/pgSQL rather than SQL: its statements are planned once per session and kept, while a SQL
-- function that cannot be inlined is planned again on every call (PostgreSQL ≤ 17).
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
                  then array(select pg_catalog.jsonb_array_elements_text(claims -> 'agent_scopes'))
                  else '{}'::text[] end as scopes
        from public.agent_api_keys k
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

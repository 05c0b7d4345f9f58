-- The claims step cheaper than the read it guards (issue 28). Every request's first statement sets
-- the claims and checks them against the database; until now it called app.establish_context, a
-- security-definer PL/pgSQL function whose one statement joins both lookups (an agent's key with
-- its organization and plan, a person's membership) and cuts the branch the claims do not name
-- with a one-time filter. Measured as the backend's CPU per call (docs/performance.md), that
-- statement cost four times the primary-key read it guards: the PL/pgSQL call, the claims parsed
-- as jsonb, and above all opening and locking the four tables and their indexes of both branches
-- on every call, the skipped one included.
--
-- Now the service knows from the token which lookup the claims name and sends one of three
-- statements (src/platform/db/database.ts), each selecting from one of the functions below. They
-- are SQL functions the planner inlines into the statement: no function call, no jsonb, only the
-- tables of that lookup. The rules are the same as 0013/0031 and are said here once:
-- * a person's organization counts only while organization_members has the row, and the role
--   comes from that row;
-- * an agent counts only while its key is active and unexpired, and its scopes are the token's
--   capped by its organization's current plan;
-- * anyone else (anon, service_role, claims naming no organization) has no context.
-- The lookups still run on every request, so removal, revocation and a downgrade take effect at
-- the caller's next request, as docs/decisions.md promises.
--
-- The statements run as the connection's user (the owner): the lookup is a scan in the
-- statement's FROM, which runs before the projection's set_config('role', …) switches roles, and
-- the owner's privileges are checked when the statement starts. So these functions need no
-- SECURITY DEFINER (which would stop the inlining) and are granted to no tenant role.
--
-- app.establish_context(claims) keeps its contract (claims in, the same transaction-local settings
-- out) for callers that hold only the claims JSON; it now chooses among the same functions.
-- test/rls/claims-context.test.ts holds the service's choice (made in TypeScript from the token)
-- to establish_context's for ordinary and malformed claims.

-- The settings every context yields, as text, in the order the claims statement sets them.
create type app.caller_context as (
  org_id text,
  org_role text,
  agent_scopes text,
  can_read text,
  can_write text,
  can_delete text
);

-- A person in an organization: one primary-key probe of organization_members.
create or replace function app.member_context(member uuid, org uuid)
returns setof app.caller_context
language sql stable
as $$
  select coalesce(m.organization_id::text, ''), coalesce(m.role, ''), '{}',
         (m.role is not null)::text, (m.role is not null)::text,
         -- Members may delete only where a table says so (app.can_delete).
         case when m.role in ('owner', 'admin') then 'all' when m.role = 'member' then 'members' else '' end
    from (select 1) one
    left join public.organization_members m on m.user_id = member and m.organization_id = org
$$;

-- An agent: its key, active and unexpired, with its scopes capped by its organization's plan.
create or replace function app.agent_context(agent uuid, org uuid, claimed_scopes text[])
returns setof app.caller_context
language sql stable
as $$
  select coalesce(c.org::text, ''), case when c.org is null then '' else 'agent' end,
         coalesce(c.scopes, '{}')::text,
         coalesce((c.scopes && app.scopes_granting('read'))::text, 'false'),
         coalesce((c.scopes && app.scopes_granting('write'))::text, 'false'),
         case when c.scopes && app.scopes_granting('admin') then 'all' else '' end
    from (select 1) one
    left join (
      select k.organization_id as org,
             array(select s from pg_catalog.unnest(claimed_scopes) s where s = any (p.mcp_scopes)) as scopes
        from public.agent_api_keys k
        join public.organizations o on o.id = k.organization_id
        join public.plans p on p.slug = o.plan
       where k.id = agent and k.organization_id = org
         and k.is_active and k.expires_at > pg_catalog.now()
    ) c on true
$$;

-- No organization: anon, service_role, or claims that name none.
create or replace function app.no_context()
returns setof app.caller_context
language sql immutable
as $$
  select '', '', '{}', 'false', 'false', ''
$$;

revoke all on function app.member_context(uuid, uuid) from public;
revoke all on function app.agent_context(uuid, uuid, text[]) from public;
revoke all on function app.no_context() from public;

-- The same choice from the claims JSON (the service makes it in TypeScript from the token:
-- claimsStatement in src/platform/db/database.ts).
create or replace function app.establish_context(claims jsonb) returns void
language plpgsql security definer
as $$
declare
  c app.caller_context;
begin
  if claims ->> 'role' = 'authenticated' and claims ->> 'org_role' = 'agent' then
    select * into c from app.agent_context(
      nullif(claims ->> 'sub', '')::uuid,
      nullif(claims ->> 'organization_id', '')::uuid,
      case when pg_catalog.jsonb_typeof(claims -> 'agent_scopes') = 'array'
           then array(select pg_catalog.jsonb_array_elements_text(claims -> 'agent_scopes')) end);
  elsif claims ->> 'role' = 'authenticated' then
    select * into c from app.member_context(
      nullif(claims ->> 'sub', '')::uuid,
      coalesce(nullif(claims -> 'app_metadata' ->> 'organization_id', ''),
               nullif(claims -> 'app_metadata' ->> 'org_id', ''))::uuid);
  else
    select * into c from app.no_context();
  end if;
  -- No SET clause on this function: it would undo these transaction-local settings at exit.
  perform pg_catalog.set_config('svc.org_id', c.org_id, true),
          pg_catalog.set_config('svc.org_role', c.org_role, true),
          pg_catalog.set_config('svc.agent_scopes', c.agent_scopes, true),
          pg_catalog.set_config('svc.can_read', c.can_read, true),
          pg_catalog.set_config('svc.can_write', c.can_write, true),
          pg_catalog.set_config('svc.can_delete', c.can_delete, true);
end $$;

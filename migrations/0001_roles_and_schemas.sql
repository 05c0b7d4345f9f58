-- Roles as PostgREST and Supabase name them. Roles are cluster-wide, so create each only once.
do $$
begin
  if not exists (select 1 from pg_roles where rolname = 'anon') then
    create role anon nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'authenticated') then
    create role authenticated nologin noinherit;
  end if;
  if not exists (select 1 from pg_roles where rolname = 'service_role') then
    create role service_role nologin noinherit bypassrls;
  end if;
  -- The connecting role switches into these per request; a superuser already may.
  if not (select rolsuper from pg_roles where rolname = current_user) then
    execute format('grant anon, authenticated, service_role to %I', current_user);
  end if;
end $$;

-- auth: identities, sessions and refresh tokens. Private: no table is granted to API roles, and
-- the REST interface never exposes this schema. Its helper functions are callable from policies.
create schema if not exists auth;
-- app: private helpers (current organization, role, scopes) and internal counters.
create schema if not exists app;

revoke create on schema public from public;
grant usage on schema public to anon, authenticated, service_role;
grant usage on schema auth, app to anon, authenticated, service_role;

-- Tables created later in public are reachable by the service role; authenticated gets explicit
-- grants table by table.
alter default privileges in schema public grant all on tables to service_role;
alter default privileges in schema public grant all on sequences to service_role;

-- The claims of the current request, as PostgREST sets them (Supabase-style helpers).
create or replace function auth.jwt() returns jsonb
language sql stable
as $$
  select coalesce(nullif(current_setting('request.jwt.claims', true), '')::jsonb, '{}'::jsonb)
$$;

create or replace function auth.uid() returns uuid
language sql stable
as $$
  select nullif(auth.jwt() ->> 'sub', '')::uuid
$$;

create or replace function auth.role() returns text
language sql stable
as $$
  select coalesce(auth.jwt() ->> 'role', current_setting('role', true))
$$;

-- Timestamps belong to the database whatever path writes a row: created_at is set once,
-- updated_at on every change, and values a caller sends are ignored.
create or replace function app.touch_timestamps() returns trigger
language plpgsql
as $$
begin
  if tg_op = 'INSERT' then
    new.created_at := now();
  else
    new.created_at := old.created_at;
  end if;
  new.updated_at := now();
  return new;
end $$;

-- Change and access notices only for organizations some API process has a realtime channel in
-- (src/realtime/hub.ts; docs/decisions.md, "Notices only where someone listens").
--
-- PostgreSQL serializes the commits of every transaction that sent a NOTIFY, in the whole
-- cluster, on one lock held through the commit's WAL flush: 32 writers inserting into a table
-- whose trigger notifies ran at 360–770 commits a second, against 2,800–3,700 with the same
-- trigger not notifying (docs/performance.md, "Notices only where someone listens"). Every write
-- of every offered table notified, whether or not anyone had subscribed.
--
-- What this file guarantees:
-- * app.realtime_interest holds one row per organization and API process with a channel there,
--   kept fresh by that process (`until`, a minute or two ahead) and removed when its last channel
--   there leaves; a process that died leaves rows that expire at their `until`.
-- * app.announce_change and app.announce_access_change notify as 0046 says, but only when a live
--   row names the row's organization: one index lookup a write instead of the global lock.
-- * The writer reads the table as itself (a security-definer call would cost more than the
--   lookup): under row-level security a member or agent sees only its own organization's row,
--   which is the only one its writes ask about.

create table app.realtime_interest (
  organization_id uuid not null,
  process uuid not null,
  until timestamptz not null,
  primary key (organization_id, process)
);
alter table app.realtime_interest enable row level security;
create policy realtime_interest_own on app.realtime_interest for select to authenticated
  using (organization_id = app.current_org_id());
grant select on app.realtime_interest to anon, authenticated;
grant all on app.realtime_interest to service_role;

create or replace function app.announce_change() returns trigger
language plpgsql
as $$
declare
  org uuid;
  row_id text;
begin
  if tg_op = 'DELETE' then
    org := old.organization_id;
    row_id := old.id::text;
  else
    org := new.organization_id;
    row_id := new.id::text;
  end if;
  if not exists (select from app.realtime_interest i
                  where i.organization_id = org and i.until > pg_catalog.now()) then
    return null;
  end if;
  perform pg_catalog.pg_notify('svc_realtime', pg_catalog.json_build_object(
    'kind', 'change', 'table', tg_table_name, 'op', tg_op, 'org', org, 'id', row_id, 'at', pg_catalog.now())::text);
  return null;
end $$;

create or replace function app.announce_access_change() returns trigger
language plpgsql
as $$
begin
  if not exists (select from app.realtime_interest i
                  where i.organization_id = old.organization_id and i.until > pg_catalog.now()) then
    return null;
  end if;
  perform pg_catalog.pg_notify('svc_realtime', pg_catalog.json_build_object(
    'kind', 'access', 'org', old.organization_id, 'user', old.user_id)::text);
  return null;
end $$;

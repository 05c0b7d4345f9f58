-- Changes for /realtime/v1 (src/realtime/, docs/realtime.md). What this file guarantees:
-- * Every insert, update and delete of a row of the tables below sends NOTIFY svc_realtime
--   (`kind` "change") when its transaction commits, on whatever path wrote it (/rest/v1,
--   functions, MCP, the worker, plain SQL), with the table, the operation, the organization and
--   the row's id: never the row. A payload is limited to 8000 bytes, and each subscriber must read the row under its
--   own claims anyway (row-level security decides what reaches whom), so every API process
--   LISTENs once and reads the row again for each subscriber's principal.
-- * A membership that ends or changes role (and an organization's deletion, which cascades to
--   its members) sends NOTIFY svc_realtime (`kind` "access") with the organization and the
--   person, so every process checks that person's open channels at once and closes those no
--   longer allowed.
--   Agent keys already announce their revocation (0034); the realtime server hears that too.
-- * One channel for both (and for broadcasts, src/realtime/hub.ts): a LISTEN is a connection of its
--   own on PostgreSQL, so each process holds one more, not three.
-- * A table is offered to realtime subscribers when it carries the trigger `realtime_notice`
--   and /rest/v1 serves it (src/realtime/tables.ts reads both from the catalog).

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
  perform pg_catalog.pg_notify('svc_realtime', pg_catalog.json_build_object(
    'kind', 'change', 'table', tg_table_name, 'op', tg_op, 'org', org, 'id', row_id, 'at', pg_catalog.now())::text);
  return null;
end $$;

do $$
declare
  t text;
begin
  foreach t in array array['contacts', 'orders', 'order_items', 'order_status_events',
                           'inventory_items', 'warehouses', 'conversations', 'messages',
                           'social_posts'] loop
    execute format('create trigger realtime_notice after insert or update or delete on public.%I
                      for each row execute function app.announce_change()', t);
  end loop;
end $$;

create or replace function app.announce_access_change() returns trigger
language plpgsql
as $$
begin
  perform pg_catalog.pg_notify('svc_realtime', pg_catalog.json_build_object(
    'kind', 'access', 'org', old.organization_id, 'user', old.user_id)::text);
  return null;
end $$;

create trigger organization_members_access_notice after update of role on public.organization_members
  for each row when (old.role is distinct from new.role) execute function app.announce_access_change();
create trigger organization_members_removed_notice after delete on public.organization_members
  for each row execute function app.announce_access_change();

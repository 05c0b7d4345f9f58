-- Triggers tell a tenant nothing about another tenant's rows. What this file guarantees:
-- * BEFORE ROW triggers run before PostgreSQL checks a row against the RLS policies' WITH CHECK,
--   so a security-definer trigger that looks a row up by the organization_id the caller sent
--   would answer from another tenant's data before RLS refuses the row. Such lookups now see
--   only the caller's own organization (app.current_org_id(), as the policies use it) when the
--   caller is signed in; the service path (imports, role service_role or the owner) is unchanged.
-- * A line naming another tenant's order is refused exactly like a line naming no order: by RLS
--   (42501) when it carries that tenant's organization_id, by the foreign key (23503) when it
--   carries the caller's own. The order's existence and status are never part of the answer.
-- * An order inserted with another tenant's organization_id never touches that tenant's order
--   counter (its row lock would make the insert wait on the other tenant's open transactions):
--   app.next_counter gives no number there.
-- Checked and left as they are (they read nothing outside the row, run as the caller under RLS,
-- or run AFTER the row passed RLS): normalize_contact, prepare_inventory_item, prepare_order_item,
-- touch_timestamps, check_order_transition, release_deleted_order, recompute_order_totals,
-- record_order_status, enforce_plan_ceiling, prepare_invitation.

-- Whether a trigger may read rows of `org` for the current caller without RLS.
create or replace function app.may_look_into(org uuid) returns boolean
language sql stable
as $$
  select coalesce(current_setting('role', true), '') not in ('authenticated', 'anon')
      or org = app.current_org_id()
$$;

create or replace function app.order_status_of(org uuid, order_id uuid) returns text
language sql stable security definer set search_path = ''
as $$
  select o.status from public.orders o
   where o.organization_id = org and o.id = order_id and app.may_look_into(org)
$$;
revoke all on function app.order_status_of(uuid, uuid) from public;

-- Counters move only for their own organization's callers: for another tenant's organization
-- there is no number (and no row lock to wait on), and RLS refuses the row right after the trigger.
create or replace function app.next_counter(org uuid, counter text, step bigint default 1) returns bigint
language sql volatile security definer set search_path = ''
as $$
  insert into app.counters as c (organization_id, name, value)
  select org, counter, step where app.may_look_into(org)
  on conflict (organization_id, name) do update set value = c.value + step
  returning c.value
$$;
revoke all on function app.next_counter(uuid, text, bigint) from public;

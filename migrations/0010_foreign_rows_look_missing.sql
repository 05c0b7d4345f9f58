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
--   counter (its row lock would make the insert wait on the other tenant's open transactions).
-- Checked and left as they are (they read nothing outside the row, run as the caller under RLS,
-- or run AFTER the row passed RLS): normalize_contact, prepare_inventory_item, prepare_order_item,
-- touch_timestamps, check_order_transition, release_deleted_order, recompute_order_totals,
-- record_order_status, enforce_plan_ceiling, prepare_invitation.

-- Whether a trigger may read rows of `org` for the current caller without RLS.
create or replace function app.may_look_into(org uuid) returns boolean
language sql stable
as $$
  select current_setting('role', true) is distinct from 'authenticated'
      or org = app.current_org_id()
$$;

create or replace function app.order_status_of(org uuid, order_id uuid) returns text
language sql stable security definer set search_path = ''
as $$
  select o.status from public.orders o
   where o.organization_id = org and o.id = order_id and app.may_look_into(org)
$$;
revoke all on function app.order_status_of(uuid, uuid) from public;

create or replace function app.prepare_order() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  n bigint;
begin
  -- Another tenant's organization: RLS refuses the row right after this trigger.
  if not app.may_look_into(new.organization_id) then
    return new;
  end if;
  if tg_op = 'INSERT' then
    n := app.next_counter(new.organization_id, 'order_number');
    new.order_number := 'ORD-' || case when n < 1000000 then lpad(n::text, 6, '0') else n::text end;
    new.subtotal := 0;
    if current_setting('role', true) = 'authenticated' then
      new.status := 'pending';
    end if;
  else
    new.order_number := old.order_number;
    select coalesce(sum(i.total), 0) into new.subtotal from public.order_items i
     where i.organization_id = new.organization_id and i.order_id = new.id;
  end if;
  new.total := new.subtotal + new.tax_total + new.shipping_total;
  return new;
end $$;

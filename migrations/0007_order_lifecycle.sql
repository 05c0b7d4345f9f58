-- The order lifecycle and the stock it moves, enforced here so that every write path (MCP tools,
-- /rest/v1, imports) obeys the same rules: a status change must follow the lifecycle, it moves
-- the stock of linked line items, and it is recorded in order_status_events.

-- Who ordered, kept on the order itself: it survives the contact being deleted or never created
-- (a full contact list must not lose an order).
alter table public.orders
  add column customer_name text check (length(customer_name) <= 300),
  add column customer_email text check (length(customer_email) <= 320),
  add column customer_phone text check (length(customer_phone) <= 40);

-- Lines keep the order they were given in (one insert gives them all the same created_at).
alter table public.order_items add column line_number integer check (line_number > 0);

create table app.order_transitions (
  from_status text not null,
  to_status text not null,
  primary key (from_status, to_status)
);
insert into app.order_transitions values
  ('pending', 'confirmed'), ('pending', 'cancelled'),
  ('confirmed', 'processing'), ('confirmed', 'cancelled'),
  ('processing', 'shipped'), ('processing', 'cancelled'),
  ('shipped', 'delivered'), ('shipped', 'returned'),
  ('delivered', 'returned');

-- The states a status may move to next; empty for the terminal ones.
create or replace function app.order_next_statuses(status text) returns text[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(t.to_status order by t.to_status), '{}') from app.order_transitions t
   where t.from_status = status
$$;

-- Who made a change, from the request's claims: an agent's key, a person, or the service itself.
create or replace function app.actor() returns text
language sql stable
as $$
  select case
    when auth.jwt() ->> 'org_role' = 'agent' then 'agent:' || (auth.jwt() ->> 'sub')
    when auth.jwt() ->> 'role' = 'authenticated' then 'user:' || (auth.jwt() ->> 'sub')
    else 'service' end
$$;

create or replace function app.check_order_transition() returns trigger
language plpgsql
as $$
declare
  allowed text[];
begin
  if new.status is distinct from old.status then
    allowed := app.order_next_statuses(old.status);
    if not new.status = any (allowed) then
      raise exception 'An order cannot move from % to %', old.status, new.status
        using errcode = 'SV409', hint = 'invalid_transition',
              detail = json_build_object('from', old.status, 'to', new.status, 'allowed', allowed)::text;
    end if;
  end if;
  return new;
end $$;
create trigger orders_transition before update of status on public.orders
  for each row execute function app.check_order_transition();

-- Stock follows the lifecycle for lines linked to an inventory item: confirmed reserves,
-- cancelled releases a reservation, shipped consumes it, returned restocks. Items are locked in
-- id order so that two orders moving the same items cannot deadlock, and with NO KEY UPDATE, which
-- does not conflict with the KEY SHARE lock a new order line's foreign key check takes.
create or replace function app.move_order_stock(org uuid, order_id uuid, from_status text, to_status text)
returns void
language plpgsql security definer set search_path = ''
as $$
declare
  reserve integer := 0;
  on_hand integer := 0;
begin
  case
    when to_status = 'confirmed' then reserve := 1;
    when to_status = 'cancelled' and from_status in ('confirmed', 'processing') then reserve := -1;
    when to_status = 'shipped' then reserve := -1; on_hand := -1;
    when to_status = 'returned' then on_hand := 1;
    else return;
  end case;
  perform 1 from public.inventory_items i
   where i.organization_id = org
     and i.id in (select l.item_id from public.order_items l where l.organization_id = org and l.order_id = move_order_stock.order_id)
   order by i.id for no key update;
  update public.inventory_items i
     set quantity_reserved = greatest(0, i.quantity_reserved + reserve * l.quantity),
         quantity_on_hand = i.quantity_on_hand + on_hand * l.quantity
    from (select li.item_id, sum(li.quantity)::integer as quantity from public.order_items li
           where li.organization_id = org and li.order_id = move_order_stock.order_id and li.item_id is not null
           group by li.item_id) l
   where i.organization_id = org and i.id = l.item_id;
end $$;
revoke all on function app.move_order_stock(uuid, uuid, text, text) from public;

-- The note of a change comes from the transaction setting svc.status_note (set by the tool that
-- changed the status); a plain REST update has none.
create or replace function app.record_order_status() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status then
    if tg_op = 'UPDATE' then
      perform app.move_order_stock(new.organization_id, new.id, old.status, new.status);
    end if;
    insert into public.order_status_events (organization_id, order_id, from_status, to_status, note, actor)
    values (new.organization_id, new.id, case when tg_op = 'UPDATE' then old.status end, new.status,
            nullif(current_setting('svc.status_note', true), ''), app.actor());
  end if;
  return null;
end $$;
create trigger orders_status_recorded after insert or update of status on public.orders
  for each row execute function app.record_order_status();

-- Deleting an order that still holds a reservation gives the stock back.
create or replace function app.release_deleted_order() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if old.status in ('confirmed', 'processing') then
    perform app.move_order_stock(old.organization_id, old.id, old.status, 'cancelled');
  end if;
  return old;
end $$;
create trigger orders_release_on_delete before delete on public.orders
  for each row execute function app.release_deleted_order();

-- Once an order is confirmed its lines hold stock, so what they reserve (item, quantity) and what
-- they cost can no longer change: lines are edited while the order is pending. An inventory item's
-- deletion may still unlink a line, and deleting the order takes its lines with it.
create or replace function app.order_status_of(org uuid, order_id uuid) returns text
language sql stable security definer set search_path = ''
as $$
  select o.status from public.orders o where o.organization_id = org and o.id = order_id
$$;
revoke all on function app.order_status_of(uuid, uuid) from public;

create or replace function app.guard_order_lines() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  locked text;
begin
  -- Imports (the service path) may write any order with its lines; they move no stock.
  if current_setting('role', true) is distinct from 'authenticated' then
    return case when tg_op = 'DELETE' then old else new end;
  end if;
  -- Unlinking is allowed only as the foreign key's SET NULL, when the item itself is gone:
  -- otherwise a caller could unlink a reserved line and strand its reservation.
  if tg_op = 'UPDATE' and new.order_id = old.order_id and new.quantity = old.quantity
     and new.unit_price = old.unit_price
     and (new.item_id is not distinct from old.item_id
          or (new.item_id is null and not exists (select 1 from public.inventory_items i
                where i.organization_id = old.organization_id and i.id = old.item_id))) then
    return new;
  end if;
  -- A missing order is one being deleted: its lines go with it.
  if tg_op in ('UPDATE', 'DELETE') then
    locked := nullif(app.order_status_of(old.organization_id, old.order_id), 'pending');
  end if;
  if tg_op in ('UPDATE', 'INSERT') and locked is null then
    locked := nullif(app.order_status_of(new.organization_id, new.order_id), 'pending');
  end if;
  if locked is null then
    return case when tg_op = 'DELETE' then old else new end;
  end if;
  raise exception 'The lines of a % order cannot change; only pending orders can be edited', locked
    using errcode = 'SV409', hint = 'order_locked',
          detail = json_build_object('status', locked)::text;
end $$;
create trigger order_items_guard before insert or update or delete on public.order_items
  for each row execute function app.guard_order_lines();

-- Events were written only by this migration's triggers from here on; earlier orders get their
-- creation event so every order has a history.
insert into public.order_status_events (organization_id, order_id, from_status, to_status, actor, created_at)
select o.organization_id, o.id, null, o.status, 'service', o.created_at from public.orders o
 where not exists (select 1 from public.order_status_events e where e.organization_id = o.organization_id and e.order_id = o.id);

-- Input limits that every write path meets, not only the MCP tools. What this file guarantees:
-- * A line's quantity is 1 … 1,000,000 (0005 only said > 0): order_items_quantity_check.
-- * An order has at most 200 lines, however they arrive (one insert, many, or lines moved from
--   another order): refused with 400 validation_error naming order_id.
-- * A contact has at most 50 tags of 1 … 100 characters each (0005 only capped their number):
--   contacts_tags_check.
-- The numbers are also in src/domain/input-limits.ts (the zod side, what tools offer a model);
-- test/rls/input-limits.test.ts fails when the two disagree. The other limits of that file were
-- already CHECKs (0005, 0007) or the column's type (unit_price numeric(12,2): cents, < 10^10).
--
-- Existing databases: rows written through /rest/v1 before this file may break the new rules, and
-- a migration must not fail on them or change business data. So each new CHECK is added NOT VALID
-- (enforced on every row written from now on) and validated only where no existing row breaks
-- it; otherwise a notice names the constraint and it stays NOT VALID until those rows are fixed
-- (`alter table … validate constraint …`). The line count is a trigger and looks only at orders
-- that gain lines.

alter table public.order_items drop constraint order_items_quantity_check;
alter table public.order_items
  add constraint order_items_quantity_check check (quantity between 1 and 1000000) not valid;

-- A CHECK cannot look inside an array by itself; immutable, so PostgreSQL may use it in one.
create or replace function app.tags_fit(tags text[]) returns boolean
language sql immutable
as $$
  select coalesce(bool_and(length(btrim(t)) between 1 and 100), true) from unnest(tags) t
$$;

alter table public.contacts drop constraint contacts_tags_check;
alter table public.contacts
  add constraint contacts_tags_check check (cardinality(tags) <= 50 and app.tags_fit(tags)) not valid;

do $$
begin
  if not exists (select 1 from public.order_items where quantity > 1000000) then
    alter table public.order_items validate constraint order_items_quantity_check;
  else
    raise notice 'order_items_quantity_check stays NOT VALID: existing lines have a quantity above 1,000,000';
  end if;
  if not exists (select 1 from public.contacts where not app.tags_fit(tags)) then
    alter table public.contacts validate constraint contacts_tags_check;
  else
    raise notice 'contacts_tags_check stays NOT VALID: existing contacts have an empty tag or one over 100 characters';
  end if;
end $$;

-- Counted after the statement, over the orders it added lines to, so a 200-line insert costs one
-- count per order rather than one per line. Security definer: the count is of the order's lines,
-- whoever may see them.
create or replace function app.check_order_line_count() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  over record;
begin
  select a.organization_id, a.order_id, count(*) as n into over
    from (select distinct organization_id, order_id from added) a
    join public.order_items i on i.organization_id = a.organization_id and i.order_id = a.order_id
   group by a.organization_id, a.order_id
  having count(*) > 200
   limit 1;
  if found then
    raise exception 'An order has at most 200 lines; order % would have %', over.order_id, over.n
      using errcode = 'SV400', hint = 'validation_error',
            detail = json_build_object(
              'issues', json_build_array(json_build_object(
                'path', 'order_id', 'message', 'An order has at most 200 lines')),
              'order_id', over.order_id, 'limit', 200, 'lines', over.n)::text;
  end if;
  return null;
end $$;

-- PostgreSQL allows a transition table only on a trigger of one event: one trigger each.
create trigger order_items_line_count_insert after insert on public.order_items
  referencing new table as added for each statement execute function app.check_order_line_count();
create trigger order_items_line_count_update after update on public.order_items
  referencing new table as added for each statement execute function app.check_order_line_count();

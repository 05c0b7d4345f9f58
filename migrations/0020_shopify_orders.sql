-- Orders imported from Shopify (issue 13, docs/webhooks.md "Shopify"). What this file adds:
-- * The shop's own name for an order ("#1001") beside ours (ORD-000042), and the `updated_at` of
--   the Shopify payload last applied: deliveries arrive in any order, and one older than what is
--   imported must change nothing.
-- * Discounts and tax-inclusive prices, so an imported order's total is the one the shop charged:
--   total = subtotal − discount_total + shipping_total, plus tax_total unless the line prices
--   already include it (taxes_included). Orders created here have neither (0 and false), and their
--   total is what it always was.
-- * The actor of a status change made by the service path can name the integration that made it
--   (the transaction setting svc.actor, e.g. `shopify`); it stays `service` otherwise.

alter table public.orders
  add column external_name text check (length(external_name) <= 100),
  add column external_updated_at timestamptz,
  add column discount_total numeric(12, 2) not null default 0 check (discount_total >= 0),
  add column taxes_included boolean not null default false;

create or replace function app.prepare_order() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  n bigint;
begin
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
  new.total := new.subtotal - new.discount_total + new.shipping_total
    + case when new.taxes_included then 0 else new.tax_total end;
  return new;
end $$;

create or replace function app.actor() returns text
language sql stable
as $$
  select case
    when auth.jwt() ->> 'org_role' = 'agent' then 'agent:' || (auth.jwt() ->> 'sub')
    when auth.jwt() ->> 'role' = 'authenticated' then 'user:' || (auth.jwt() ->> 'sub')
    else coalesce(nullif(current_setting('svc.actor', true), ''), 'service') end
$$;

-- Requests may give an order at most 200 lines (0014); an import takes the order the shop took,
-- up to 1,000 lines (a 250-line wholesale order is ordinary in Shopify).
create or replace function app.check_order_line_count() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  cap integer := case when current_setting('role', true) = 'authenticated' then 200 else 1000 end;
  over record;
begin
  select a.organization_id, a.order_id, count(*) as n into over
    from (select distinct organization_id, order_id from added) a
    join public.order_items i on i.organization_id = a.organization_id and i.order_id = a.order_id
   group by a.organization_id, a.order_id
  having count(*) > cap
   limit 1;
  if found then
    raise exception 'An order has at most % lines; order % would have %', cap, over.order_id, over.n
      using errcode = 'SV400', hint = 'validation_error',
            detail = json_build_object(
              'issues', json_build_array(json_build_object(
                'path', 'order_id', 'message', format('An order has at most %s lines', cap))),
              'order_id', over.order_id, 'limit', cap, 'lines', over.n)::text;
  end if;
  return null;
end $$;

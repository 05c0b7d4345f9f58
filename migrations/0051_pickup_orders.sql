-- Orders say whether they are delivered or picked up (issue 30 §2). A pickup has no shipping
-- address or courier phone; a delivery needs both where orders are created the spec's way
-- (svc_create_order and POST /functions/v1/orders, src/domain/inputs.ts NewOrder). Not a
-- constraint here: /rest/v1 inserts rows as they are, with only organization_id required
-- (the contract's core columns), and orders from before this migration are deliveries.
alter table public.orders
  add column fulfillment text not null default 'delivery'
    constraint orders_fulfillment_check check (fulfillment in ('delivery', 'pickup'));

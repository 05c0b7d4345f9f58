-- Newest-first lists read straight off an index. What this file guarantees:
-- * Every list the service pages through orders by (created_at desc, id desc), and its keyset
--   cursor is the row comparison (created_at, id) < (…, …). The indexes of 0005 were
--   (organization_id, created_at desc, id): id ascending, so neither a forward nor a backward scan
--   gives that order, and PostgreSQL sorted the whole tenant for every page (228–500 ms at 100,000
--   contacts, docs/performance.md). They are replaced by (…, created_at desc, id desc), under the
--   same names; nothing else used their id order.
-- * The same for the status-filtered lists of orders and inventory items: (organization_id,
--   status, created_at desc, id desc), so a page of one status needs no sort either.

drop index public.contacts_created_idx;
create index contacts_created_idx on public.contacts (organization_id, created_at desc, id desc);

drop index public.orders_created_idx;
create index orders_created_idx on public.orders (organization_id, created_at desc, id desc);
drop index public.orders_status_idx;
create index orders_status_idx on public.orders (organization_id, status, created_at desc, id desc);

drop index public.inventory_items_created_idx;
create index inventory_items_created_idx on public.inventory_items (organization_id, created_at desc, id desc);
drop index public.inventory_items_status_idx;
create index inventory_items_status_idx on public.inventory_items (organization_id, status, created_at desc, id desc);

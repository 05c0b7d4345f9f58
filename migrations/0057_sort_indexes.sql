-- The contacts and orders tables sort by a column (issue 30 §3, docs/decisions.md "Sorting the
-- contacts and orders tables"). Their pages keep keyset cursors on (column, id) in either
-- direction (web/src/lib/keyset.ts), so each sortable column needs an index that gives that order
-- within a tenant, read forward for ascending and backward for descending, nulls last ascending
-- and first descending as PostgreSQL orders them:
-- * created_at: contacts_created_idx, orders_created_idx (0011), already (column desc, id desc).
-- * orders.order_number: unique within the organization (orders_number_key, 0005) and never
--   null, so the unique index gives the order and the id only breaks ties that never happen.
-- * contacts.first_name: contacts_name_idx (0005) is on lower(last_name), lower(first_name),
--   which PostgREST's order cannot name: a new index.
-- * contacts.email: contacts_email_key (0005) is unique on (organization_id, email), but the
--   contacts without an email (every one from a message channel) are one group of nulls it
--   does not order by id: a page in them would sort them all. A new index with the id.
-- The phone, tags, status, customer and total columns do not sort (the decision says why; the
-- total because PostgreSQL does not use a numeric comparison as an index condition under
-- row-level security), so they get no index: each one is paid by every insert and update.
create index contacts_first_name_idx on public.contacts (organization_id, first_name, id);
create index contacts_email_idx on public.contacts (organization_id, email, id);

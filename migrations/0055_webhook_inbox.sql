-- The durable inbox of Meta webhook receipts (issue 28, docs/decisions.md "The durable webhook
-- inbox"). What this file guarantees:
-- * A verified Meta delivery is acknowledged once its raw body is committed here: one row, one
--   autocommit insert, nothing else (no routing, no events, no jobs), so a receipt costs the
--   database what the bare "verify and commit the body" server costs it.
-- * The worker's router takes rows in id order in batches (`for update skip locked`, so routers
--   of several processes never take the same row), routes each to its connected accounts, stores
--   the delivery, its events and their jobs (app.webhook_deliveries, app.webhook_events, pgboss)
--   and deletes the rows, all in one transaction: a row is routed exactly once, and a router that
--   dies mid-batch leaves its rows here, untouched, for the next.
-- * `delivery_id` is the SHA-256 of the raw body (Meta's dedupe key), computed at receipt; a
--   duplicate is found by the router against app.webhook_deliveries, not here (no unique index:
--   the receipt's insert stays one index wide).
-- * `received_at` is when the receipt committed: the events take it, so the processing lag and the
--   owner's listing count from the receipt, not from the routing.
-- * Raw bodies may hold several tenants' entries: no API role may read or write this table.

create table app.webhook_inbox (
  id bigint generated always as identity primary key,
  provider text not null check (provider = 'meta'),
  delivery_id text not null check (length(delivery_id) between 1 and 255),
  -- The body exactly as received and verified (UTF-8 JSON).
  payload text not null,
  received_at timestamptz not null default now()
);

revoke all on app.webhook_inbox from public, anon, authenticated;
grant all on app.webhook_inbox to service_role;
alter table app.webhook_inbox enable row level security;

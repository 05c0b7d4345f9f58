-- The inbound webhook inbox (issue 13, docs/webhooks.md). What this file guarantees:
-- * Every verified delivery is kept exactly as it arrived (app.webhook_deliveries.payload, the raw
--   body as text) once per provider and delivery id: a provider that delivers the same thing twice
--   inserts nothing the second time (unique (provider, delivery_id), `on conflict do nothing`).
--   Meta sends no delivery id, so its key is the SHA-256 of the raw body; Shopify's will be
--   X-Shopify-Webhook-Id.
-- * One delivery may speak for several connected accounts (a Meta app receives every customer's
--   WhatsApp numbers, Pages and Instagram accounts in one subscription, and batches them). The
--   receiver routes each entry at receipt and stores one app.webhook_events row per account it
--   reaches: each event belongs to exactly one organization and account, so it can be processed,
--   retried, rejected at a plan ceiling and replayed per tenant. Entries for unknown accounts are
--   not stored as events.
-- * Raw deliveries may hold several tenants' entries, so no API role may read them. Owners and
--   admins may read their organization's events (status, attempts, last error; not the payload);
--   nobody but the service writes either table. Neither is in the exposed schema.

create table app.webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  provider text not null check (provider in ('meta', 'shopify', 'internal')),
  delivery_id text not null check (length(delivery_id) between 1 and 255),
  -- The body exactly as received (verified over these bytes; UTF-8 JSON for every provider here).
  payload text not null,
  received_at timestamptz not null default now(),
  unique (provider, delivery_id)
);
create index webhook_deliveries_received_idx on app.webhook_deliveries (received_at);

create table app.webhook_events (
  organization_id uuid not null references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  delivery uuid not null references app.webhook_deliveries (id) on delete cascade,
  provider text not null check (provider in ('meta', 'shopify', 'internal')),
  account_id uuid not null,
  -- The delivery's key again, so an event names its delivery without a join.
  delivery_id text not null check (length(delivery_id) between 1 and 255),
  -- What the delivery is about: Meta's `object` (whatsapp_business_account, page, instagram).
  topic text not null check (length(topic) between 1 and 100),
  received_at timestamptz not null default now(),
  status text not null default 'pending'
    check (status in ('pending', 'processed', 'failed', 'rejected', 'ignored')),
  attempts integer not null default 0 check (attempts >= 0),
  last_error text check (length(last_error) <= 2000),
  processed_at timestamptz,
  primary key (organization_id, id),
  foreign key (organization_id, account_id) references app.connected_accounts (organization_id, id),
  unique (provider, delivery_id, account_id)
);
create index webhook_events_org_idx on app.webhook_events (organization_id, received_at desc, id desc);
create index webhook_events_status_idx on app.webhook_events (status, received_at) where status <> 'processed';
create index webhook_events_delivery_idx on app.webhook_events (delivery);

revoke all on app.webhook_deliveries from public, anon, authenticated;
grant all on app.webhook_deliveries to service_role;
alter table app.webhook_deliveries enable row level security;

revoke all on app.webhook_events from public, anon, authenticated;
grant select on app.webhook_events to authenticated;
grant all on app.webhook_events to service_role;
alter table app.webhook_events enable row level security;
create policy webhook_events_select on app.webhook_events for select to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()));

-- Business records. Every row belongs to one organization: primary keys are
-- (organization_id, id) and foreign keys carry organization_id, so no row can point into another
-- tenant and every table can be distributed by organization_id.

create table public.contacts (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  first_name text check (length(first_name) <= 200),
  last_name text check (length(last_name) <= 200),
  email text check (length(email) <= 320 and email ~ '^[^@\s]+@[^@\s]+$'),
  phone text check (phone ~ '^\+[1-9][0-9]{6,14}$'),
  company text check (length(company) <= 200),
  job_title text check (length(job_title) <= 200),
  tags text[] not null default '{}' check (cardinality(tags) <= 50),
  notes text check (length(notes) <= 10000),
  address jsonb check (address is null or jsonb_typeof(address) = 'object'),
  source text not null default 'manual' check (length(source) between 1 and 50),
  external_id text check (length(external_id) <= 200),
  whatsapp_id text,
  facebook_psid text,
  instagram_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id)
);
create unique index contacts_email_key on public.contacts (organization_id, email);
create unique index contacts_external_key on public.contacts (organization_id, source, external_id);
create unique index contacts_whatsapp_key on public.contacts (organization_id, whatsapp_id);
create unique index contacts_facebook_key on public.contacts (organization_id, facebook_psid);
create unique index contacts_instagram_key on public.contacts (organization_id, instagram_id);
create index contacts_created_idx on public.contacts (organization_id, created_at desc, id);
create index contacts_phone_idx on public.contacts (organization_id, phone);
create index contacts_name_idx on public.contacts (organization_id, lower(last_name), lower(first_name));
create index contacts_tags_idx on public.contacts using gin (tags);

-- Emails compare case-insensitively, so they are stored lower-cased; blank strings mean absent.
create or replace function app.normalize_contact() returns trigger
language plpgsql
as $$
begin
  new.email := nullif(lower(btrim(new.email)), '');
  new.phone := nullif(btrim(new.phone), '');
  return new;
end $$;
create trigger contacts_normalize before insert or update on public.contacts
  for each row execute function app.normalize_contact();
create trigger contacts_touch before insert or update on public.contacts
  for each row execute function app.touch_timestamps();

create table public.warehouses (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null check (length(btrim(name)) between 1 and 200),
  address jsonb check (address is null or jsonb_typeof(address) = 'object'),
  is_default boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id)
);
create unique index warehouses_one_default on public.warehouses (organization_id) where is_default;
create unique index warehouses_name_key on public.warehouses (organization_id, name);
create trigger warehouses_touch before insert or update on public.warehouses
  for each row execute function app.touch_timestamps();

-- Each organization starts with its default warehouse, so stock always has somewhere to live.
create or replace function app.create_default_warehouse() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  insert into public.warehouses (organization_id, name, is_default) values (new.id, 'Main warehouse', true);
  return new;
end $$;
create trigger organizations_default_warehouse after insert on public.organizations
  for each row execute function app.create_default_warehouse();

create table public.inventory_items (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  warehouse_id uuid,
  name text not null check (length(btrim(name)) between 1 and 300),
  sku text check (length(btrim(sku)) between 1 and 100),
  description text check (length(description) <= 10000),
  unit_price numeric(12, 2) not null default 0 check (unit_price >= 0),
  currency text not null default 'USD' check (currency ~ '^[A-Z]{3}$'),
  quantity_on_hand integer not null default 0,
  quantity_reserved integer not null default 0 check (quantity_reserved >= 0),
  reorder_point integer not null default 0 check (reorder_point >= 0),
  status text not null default 'active' check (status in ('active', 'draft', 'archived')),
  auto_created boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  constraint inventory_items_sku_key unique (organization_id, sku),
  foreign key (organization_id, warehouse_id) references public.warehouses (organization_id, id)
);
create index inventory_items_name_idx on public.inventory_items (organization_id, lower(name));
create index inventory_items_status_idx on public.inventory_items (organization_id, status, created_at desc);
create index inventory_items_warehouse_idx on public.inventory_items (organization_id, warehouse_id);
create index inventory_items_created_idx on public.inventory_items (organization_id, created_at desc, id);

create or replace function app.prepare_inventory_item() returns trigger
language plpgsql
as $$
begin
  if new.warehouse_id is null then
    select w.id into new.warehouse_id from public.warehouses w
     where w.organization_id = new.organization_id and w.is_default;
  end if;
  new.sku := nullif(btrim(new.sku), '');
  return new;
end $$;
create trigger inventory_items_prepare before insert or update on public.inventory_items
  for each row execute function app.prepare_inventory_item();
create trigger inventory_items_touch before insert or update on public.inventory_items
  for each row execute function app.touch_timestamps();

create table public.orders (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  order_number text not null,
  contact_id uuid,
  status text not null default 'pending'
    check (status in ('pending', 'confirmed', 'processing', 'shipped', 'delivered', 'cancelled', 'returned')),
  currency text not null default 'USD' check (currency ~ '^[A-Z]{3}$'),
  subtotal numeric(12, 2) not null default 0,
  tax_total numeric(12, 2) not null default 0 check (tax_total >= 0),
  shipping_total numeric(12, 2) not null default 0 check (shipping_total >= 0),
  total numeric(12, 2) not null default 0,
  shipping_address text check (length(shipping_address) <= 2000),
  shipping_phone_number text check (length(shipping_phone_number) <= 40),
  notes text check (length(notes) <= 10000),
  source text not null default 'manual' check (length(source) between 1 and 50),
  external_id text check (length(external_id) <= 200),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  constraint orders_number_key unique (organization_id, order_number),
  foreign key (organization_id, contact_id) references public.contacts (organization_id, id)
    on delete set null (contact_id)
);
create unique index orders_external_key on public.orders (organization_id, source, external_id);
create index orders_created_idx on public.orders (organization_id, created_at desc, id);
create index orders_status_idx on public.orders (organization_id, status, created_at desc);
create index orders_contact_idx on public.orders (organization_id, contact_id);

-- A number from a per-organization counter; the row lock makes concurrent callers take turns.
create or replace function app.next_counter(org uuid, counter text, step bigint default 1) returns bigint
language sql volatile security definer set search_path = ''
as $$
  insert into app.counters as c (organization_id, name, value) values (org, counter, step)
  on conflict (organization_id, name) do update set value = c.value + step
  returning c.value
$$;
revoke all on function app.next_counter(uuid, text, bigint) from public;

-- What the database computes is never taken from the caller: number, totals, timestamps.
-- Requests start every order as pending; the service path (imports) may set another status.
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
  new.total := new.subtotal + new.tax_total + new.shipping_total;
  return new;
end $$;
create trigger orders_prepare before insert or update on public.orders
  for each row execute function app.prepare_order();
create trigger orders_touch before insert or update on public.orders
  for each row execute function app.touch_timestamps();

create table public.order_items (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  order_id uuid not null,
  item_id uuid,
  name text not null check (length(btrim(name)) between 1 and 300),
  sku text check (length(sku) <= 100),
  quantity integer not null check (quantity > 0),
  unit_price numeric(12, 2) not null default 0 check (unit_price >= 0),
  total numeric(12, 2) not null default 0,
  auto_created boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, order_id) references public.orders (organization_id, id) on delete cascade,
  foreign key (organization_id, item_id) references public.inventory_items (organization_id, id)
    on delete set null (item_id)
);
create index order_items_order_idx on public.order_items (organization_id, order_id);
create index order_items_item_idx on public.order_items (organization_id, item_id);

create or replace function app.prepare_order_item() returns trigger
language plpgsql
as $$
begin
  new.total := round(new.quantity * new.unit_price, 2);
  return new;
end $$;
create trigger order_items_prepare before insert or update on public.order_items
  for each row execute function app.prepare_order_item();
create trigger order_items_touch before insert or update on public.order_items
  for each row execute function app.touch_timestamps();

-- Touching an order makes orders_prepare recompute its subtotal from the lines, whichever path
-- wrote them. A line moved to another order changes both.
create or replace function app.recompute_order_totals() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    update public.orders o set updated_at = now()
     where o.organization_id = old.organization_id and o.id = old.order_id;
  end if;
  if tg_op = 'INSERT' or (tg_op = 'UPDATE' and new.order_id is distinct from old.order_id) then
    update public.orders o set updated_at = now()
     where o.organization_id = new.organization_id and o.id = new.order_id;
  end if;
  return null;
end $$;
create trigger order_items_totals after insert or update or delete on public.order_items
  for each row execute function app.recompute_order_totals();

-- Append-only history of status changes (who, when, from, to, note).
create table public.order_status_events (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  order_id uuid not null,
  from_status text,
  to_status text not null,
  note text check (length(note) <= 2000),
  actor text,
  created_at timestamptz not null default now(),
  primary key (organization_id, id),
  foreign key (organization_id, order_id) references public.orders (organization_id, id) on delete cascade
);
create index order_status_events_order_idx on public.order_status_events (organization_id, order_id, created_at);

select app.apply_tenant_policies('public.contacts');
select app.apply_tenant_policies('public.warehouses');
select app.apply_tenant_policies('public.inventory_items', true);
select app.apply_tenant_policies('public.orders');
select app.apply_tenant_policies('public.order_items', true);

-- Status history is written by the database itself; callers only read it.
alter table public.order_status_events enable row level security;
grant select on public.order_status_events to authenticated;
grant all on public.order_status_events to service_role;
create policy tenant_select on public.order_status_events for select to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.can_read()));

-- Connected accounts, conversations and messages (issue 12). What this file guarantees:
-- * A connected account's secrets (access token, webhook secret) are stored only as ciphertext
--   (src/platform/secrets.ts) in app.connected_accounts, a table outside the exposed schema whose
--   secret columns no API role may select. /rest/v1 serves the view public.connected_accounts
--   (security_invoker: the caller's grants and the table's policies apply), which has no secret
--   column at all. Owners and admins write accounts through row-level security; the secret
--   columns are write-only for them.
-- * One (provider, external_id) is connected in at most one organization across the whole
--   service (a global partial unique index): inbound webhooks are routed by it.
-- * Disconnecting sets disconnected_at and keeps the row: conversations and messages refer to it
--   and stay readable. Connecting the same (provider, external_id) again in the same organization
--   revives that row (src/domain/connected-accounts.ts), so its history stays attached.
-- * conversations (one per organization × account × contact) and messages are tenant rows with
--   (organization_id, id) keys, readable under the standard tenant_select policy and written by
--   nobody through /rest/v1: the service writes them through app.open_conversation (as the
--   caller, checked against the caller's context) or on the service path (webhooks, the sender).
-- * A message always belongs to its conversation's account ((organization_id, conversation_id,
--   account_id) references the conversation), and inserting one moves its conversation's
--   last_message_at, last_inbound_at and unread_count.

create table app.connected_accounts (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  provider text not null check (provider in ('whatsapp', 'facebook', 'instagram', 'shopify')),
  external_id text not null check (length(btrim(external_id)) between 1 and 255),
  name text check (length(name) <= 200),
  -- `v1:<key id>:<base64url(iv ‖ tag ‖ ciphertext)>`, bound to (organization_id, id) and the column.
  access_token_encrypted text not null check (length(access_token_encrypted) <= 20000),
  webhook_secret_encrypted text check (length(webhook_secret_encrypted) <= 20000),
  -- Whether there is a webhook secret, readable without reading the secret's column.
  has_webhook_secret boolean generated always as (webhook_secret_encrypted is not null) stored,
  created_by uuid references auth.users (id) on delete set null,
  disconnected_at timestamptz,
  disconnected_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  check (provider <> 'shopify' or webhook_secret_encrypted is not null)
);
create unique index connected_accounts_live_key on app.connected_accounts (provider, external_id)
  where disconnected_at is null;
create index connected_accounts_org_idx on app.connected_accounts (organization_id, created_at desc, id desc);
create trigger connected_accounts_touch before insert or update on app.connected_accounts
  for each row execute function app.touch_timestamps();

alter table app.connected_accounts enable row level security;
grant select (organization_id, id, provider, external_id, name, has_webhook_secret, created_by,
              disconnected_at, disconnected_by, created_at, updated_at)
  on app.connected_accounts to authenticated;
grant insert (organization_id, id, provider, external_id, name, access_token_encrypted,
              webhook_secret_encrypted, created_by)
  on app.connected_accounts to authenticated;
grant update (name, access_token_encrypted, webhook_secret_encrypted, disconnected_at, disconnected_by)
  on app.connected_accounts to authenticated;
grant all on app.connected_accounts to service_role;
create policy accounts_select on app.connected_accounts for select to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.can_read()));
create policy accounts_insert on app.connected_accounts for insert to authenticated
  with check (organization_id = (select app.current_org_id()) and (select app.is_org_admin()));
create policy accounts_update on app.connected_accounts for update to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()))
  with check (organization_id = (select app.current_org_id()));

create view public.connected_accounts with (security_invoker = true) as
  select a.organization_id, a.id, a.provider, a.external_id, a.name,
         case when a.disconnected_at is null then 'connected' else 'disconnected' end as status,
         a.has_webhook_secret, a.created_by, a.disconnected_at, a.created_at, a.updated_at
    from app.connected_accounts a;
revoke all on public.connected_accounts from authenticated, anon, service_role;
grant select on public.connected_accounts to authenticated, service_role;

create table public.conversations (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  account_id uuid not null,
  contact_id uuid not null,
  channel text not null check (channel in ('whatsapp', 'messenger', 'instagram')),
  status text not null default 'open' check (status in ('open', 'pending', 'resolved', 'snoozed')),
  assignee_user_id uuid,
  -- The conversation's newest activity; its creation until the first message.
  last_message_at timestamptz not null default now(),
  -- The customer's newest message: the messaging windows run from here.
  last_inbound_at timestamptz,
  unread_count integer not null default 0 check (unread_count >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  constraint conversations_account_contact_key unique (organization_id, account_id, contact_id),
  -- What messages reference, so a message cannot name another account than its conversation's.
  constraint conversations_id_account_key unique (organization_id, id, account_id),
  foreign key (organization_id, account_id) references app.connected_accounts (organization_id, id),
  foreign key (organization_id, contact_id) references public.contacts (organization_id, id) on delete cascade,
  foreign key (organization_id, assignee_user_id) references public.organization_members (organization_id, user_id)
    on delete set null (assignee_user_id)
);
create index conversations_activity_idx on public.conversations (organization_id, last_message_at desc, id desc);
create index conversations_contact_idx on public.conversations (organization_id, contact_id);
create trigger conversations_touch before insert or update on public.conversations
  for each row execute function app.touch_timestamps();

create table public.messages (
  organization_id uuid not null default app.current_org_id() references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  conversation_id uuid not null,
  account_id uuid not null,
  direction text not null check (direction in ('in', 'out')),
  -- Outbound sends use the first six; inbound webhooks may bring any of them.
  type text not null check (type in ('text', 'image', 'video', 'audio', 'document', 'template', 'sticker',
                                     'location', 'contacts', 'interactive', 'reaction', 'unsupported')),
  body text check (length(body) <= 10000),
  media_url text check (length(media_url) <= 2048),
  template jsonb check (template is null or jsonb_typeof(template) = 'object'),
  -- What a type without a body carries (a location, shared contacts, a reaction, a button reply).
  content jsonb check (content is null or jsonb_typeof(content) in ('object', 'array')),
  provider_message_id text check (length(provider_message_id) <= 255),
  -- Outbound: queued → sent → delivered → read, or failed. Inbound: received.
  status text not null check (status in ('queued', 'sent', 'delivered', 'read', 'failed', 'received')),
  error jsonb check (error is null or jsonb_typeof(error) = 'object'),
  sent_by_user_id uuid references auth.users (id) on delete set null,
  sent_by_agent_key_id uuid,
  idempotency_key text check (length(idempotency_key) between 1 and 255),
  queued_at timestamptz,
  sent_at timestamptz,
  delivered_at timestamptz,
  read_at timestamptz,
  failed_at timestamptz,
  -- Inbound: when the customer sent it (the provider's timestamp).
  received_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  check ((direction = 'in') = (status = 'received')),
  check (sent_by_user_id is null or sent_by_agent_key_id is null),
  foreign key (organization_id, conversation_id, account_id)
    references public.conversations (organization_id, id, account_id) on delete cascade,
  foreign key (organization_id, sent_by_agent_key_id) references public.agent_api_keys (organization_id, id)
    on delete set null (sent_by_agent_key_id)
);
create unique index messages_provider_key on public.messages (organization_id, account_id, provider_message_id);
create unique index messages_idempotency_key on public.messages (organization_id, idempotency_key);
create index messages_conversation_idx on public.messages (organization_id, conversation_id, created_at desc, id desc);
create trigger messages_touch before insert or update on public.messages
  for each row execute function app.touch_timestamps();

-- Read-only for callers: the tenant_select policy of every tenant table, and no write grant.
alter table public.conversations enable row level security;
grant select on public.conversations to authenticated;
grant all on public.conversations to service_role;
create policy tenant_select on public.conversations for select to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.can_read()));
alter table public.messages enable row level security;
grant select on public.messages to authenticated;
grant all on public.messages to service_role;
create policy tenant_select on public.messages for select to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.can_read()));

-- A new message moves its conversation: newest activity, the customer's last word, unread count.
-- Definer, because callers have no update on conversations; it touches only the row's own parent.
create or replace function app.record_message_activity() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  update public.conversations v
     set last_message_at = greatest(v.last_message_at, new.created_at),
         last_inbound_at = case when new.direction = 'in'
                                then greatest(v.last_inbound_at, coalesce(new.received_at, new.created_at))
                                else v.last_inbound_at end,
         unread_count = v.unread_count + case when new.direction = 'in' then 1 else 0 end
   where v.organization_id = new.organization_id and v.id = new.conversation_id;
  return null;
end $$;
create trigger messages_activity after insert on public.messages
  for each row execute function app.record_message_activity();

-- The conversation of (account, contact) in `org`, created when there is none; concurrent callers
-- get the same row. A signed-in caller may open one only in its own organization and only with
-- write access (the checks the tenant_insert policy would make); the service path (webhooks) may
-- name any organization. The account must be connected and able to message; its provider decides
-- the channel (a Facebook Page talks over Messenger).
create or replace function app.open_conversation(org uuid, account uuid, contact uuid)
returns setof public.conversations
language plpgsql volatile security definer set search_path = ''
as $$
declare
  acting_as_caller boolean := coalesce(current_setting('role', true), '') in ('authenticated', 'anon');
  account_provider text;
begin
  if acting_as_caller and (org is distinct from app.current_org_id() or not app.can_write()) then
    raise exception 'You are not allowed to open conversations' using errcode = '42501';
  end if;
  select a.provider into account_provider from app.connected_accounts a
   where a.organization_id = org and a.id = account and a.disconnected_at is null;
  if account_provider is null or account_provider = 'shopify' then
    raise exception 'No such connected messaging account' using errcode = 'SV404', hint = 'not_found';
  end if;
  if not exists (select 1 from public.contacts c where c.organization_id = org and c.id = contact) then
    raise exception 'No such contact' using errcode = 'SV404', hint = 'not_found';
  end if;
  insert into public.conversations (organization_id, account_id, contact_id, channel)
  values (org, account, contact, case account_provider when 'facebook' then 'messenger' else account_provider end)
  on conflict on constraint conversations_account_contact_key do nothing;
  -- A statement of its own: it sees a row a concurrent caller committed while this one waited.
  return query select * from public.conversations v
   where v.organization_id = org and v.account_id = account and v.contact_id = contact;
end $$;
revoke all on function app.open_conversation(uuid, uuid, uuid) from public;
grant execute on function app.open_conversation(uuid, uuid, uuid) to authenticated, service_role;

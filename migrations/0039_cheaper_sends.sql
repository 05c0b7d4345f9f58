-- Sends that cost what their work costs (issue 28). What changes, and what stays guaranteed:
-- * app.open_conversation looks for the conversation first and inserts only when there is none.
--   Its insert-on-conflict found the existing row on nearly every send, and a speculative insert
--   that meets a row another open transaction has updated (every send updates its conversation,
--   app.record_message_activity) waits for that transaction to end: sends to one conversation
--   queued behind each other's whole transactions. The checks are the same (the caller's
--   organization and write access, a connected messaging account, the contact), and so is the
--   answer: concurrent callers of a missing conversation still get the one row (the insert path is
--   unchanged).
-- * app.queue_message can insert the message already claimed (`sending_until`, 0017) for
--   `claim_seconds`: the request that queues a send calls Meta at once, and claimed here it need
--   not claim in a transaction of its own. The worker's job for the message waits out a claim as
--   it waits out any other caller's (src/jobs/send-message.ts): a request that dies after its
--   commit delays the worker's first try until the claim runs out, and never lets two callers
--   call Meta at once. `message_id` lets the caller name the new message's id, so that its job can
--   be enqueued before the insert and the insert be the transaction's last statement: the insert
--   takes the organization's ceiling lock and updates the conversation row (hot rows concurrent
--   sends wait for), and so holds them only for the commit.

create or replace function app.open_conversation(org uuid, account uuid, contact uuid)
returns setof public.conversations
language plpgsql volatile security definer set search_path = ''
as $$
declare
  acting_as_caller boolean := coalesce(current_setting('role', true), '') in ('authenticated', 'anon');
  account_provider text;
  found public.conversations;
begin
  if acting_as_caller and (org is distinct from app.current_org_id() or not app.can_write()) then
    raise exception 'You are not allowed to open conversations' using errcode = '42501';
  end if;
  -- The common case: the conversation exists on a live messaging account (its contact exists:
  -- the foreign key says so). A plain read, which waits for no one.
  select v.* into found from public.conversations v
    join app.connected_accounts a on a.organization_id = v.organization_id and a.id = v.account_id
   where v.organization_id = org and v.account_id = account and v.contact_id = contact
     and a.disconnected_at is null and a.provider <> 'shopify';
  if found.id is not null then
    return next found;
    return;
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

drop function app.queue_message(uuid, uuid, text, text, text, jsonb, text);
create function app.queue_message(org uuid, conversation uuid, message_type text, message_body text,
                                  message_media_url text, message_template jsonb, key text,
                                  claim_seconds integer default null, message_id uuid default null)
returns setof public.messages
language plpgsql volatile security definer set search_path = ''
as $$
declare
  acting_as_caller boolean := coalesce(current_setting('role', true), '') in ('authenticated', 'anon');
  conv public.conversations;
  sender uuid := nullif(auth.jwt() ->> 'sub', '')::uuid;
begin
  if acting_as_caller and (org is distinct from app.current_org_id() or not app.can_write()) then
    raise exception 'You are not allowed to send messages' using errcode = '42501';
  end if;
  select v.* into conv from public.conversations v
    join app.connected_accounts a on a.organization_id = v.organization_id and a.id = v.account_id
   where v.organization_id = org and v.id = conversation and a.disconnected_at is null;
  if conv.id is null then
    raise exception 'No such conversation on a connected account' using errcode = 'SV404', hint = 'not_found';
  end if;
  return query
  insert into public.messages (organization_id, id, conversation_id, account_id, direction, type, body, media_url,
                               template, status, queued_at, idempotency_key, sent_by_user_id, sent_by_agent_key_id,
                               sending_until)
  values (conv.organization_id, coalesce(message_id, gen_random_uuid()), conv.id, conv.account_id, 'out', message_type, message_body, message_media_url,
          message_template, 'queued', now(), key,
          case when acting_as_caller and not app.is_agent() then sender end,
          case when acting_as_caller and app.is_agent() then sender end,
          case when claim_seconds is not null then now() + make_interval(secs => claim_seconds) end)
  returning *;
end $$;
revoke all on function app.queue_message(uuid, uuid, text, text, text, jsonb, text, integer, uuid) from public;
grant execute on function app.queue_message(uuid, uuid, text, text, text, jsonb, text, integer, uuid)
  to authenticated, service_role;

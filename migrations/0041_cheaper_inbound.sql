-- Inbound messages that cost what their work costs (issue 28). The worker stored each inbound
-- message in four round trips (the account's channel, the contact, app.open_conversation, the
-- insert); app.receive_message does the same in one statement, with the same rules:
-- * the account must be connected and talk over the message's channel (else SV404 / SV400: the
--   event fails at once, as the TypeScript checks' 404 and 400 made it);
-- * the contact is found by the channel's identity column; a WhatsApp identity first claims the
--   oldest contact with that phone number and no WhatsApp id yet; otherwise one is inserted, which
--   counts against the plan's contacts ceiling (0036's trigger: SV403, the event is rejected), and
--   concurrent callers with one identity get one row (the insert yields to the winner, and the
--   next statement, a new snapshot, finds it);
-- * the conversation is app.open_conversation's (0039), found or created;
-- * the message is stored once per (organization, account, provider id): a duplicate stores
--   nothing and answers false.
-- The identity arrives normalized by the caller (src/domain/conversations.ts: E.164 phone, digits
-- for wa_id), since phone numbers are parsed in TypeScript (libphonenumber-js). Service path only:
-- no tenant role may call it.

create or replace function app.receive_message(org uuid, account uuid, message_channel text, identity text,
                                               identity_phone text, contact_name text, message_type text,
                                               message_body text, message_content jsonb, provider_id text,
                                               received timestamptz)
returns boolean
language plpgsql volatile security definer set search_path = ''
as $$
declare
  account_provider text;
  account_channel text;
  contact uuid;
  conversation uuid;
  stored uuid;
begin
  select a.provider into account_provider from app.connected_accounts a
   where a.organization_id = org and a.id = account and a.disconnected_at is null;
  account_channel := case account_provider when 'whatsapp' then 'whatsapp' when 'facebook' then 'messenger'
                                           when 'instagram' then 'instagram' end;
  if account_channel is null then
    raise exception 'No such connected messaging account' using errcode = 'SV404', hint = 'not_found';
  end if;
  if account_channel <> message_channel then
    raise exception 'This account talks over %, not %', account_channel, message_channel
      using errcode = 'SV400', hint = 'validation_error';
  end if;

  -- Static statements per channel, so each keeps its cached plan (the common case: found).
  if message_channel = 'whatsapp' then
    select c.id into contact from public.contacts c where c.organization_id = org and c.whatsapp_id = identity;
    if contact is null and identity_phone is not null then
      update public.contacts c set whatsapp_id = identity
       where (c.organization_id, c.id) = (select o.organization_id, o.id from public.contacts o
                where o.organization_id = org and o.phone = identity_phone and o.whatsapp_id is null
                order by o.created_at, o.id limit 1)
         and c.whatsapp_id is null
      returning c.id into contact;
    end if;
  elsif message_channel = 'messenger' then
    select c.id into contact from public.contacts c where c.organization_id = org and c.facebook_psid = identity;
  else
    select c.id into contact from public.contacts c where c.organization_id = org and c.instagram_id = identity;
  end if;
  if contact is null then
    -- A new customer: rare beside their messages, so the one dynamic statement is here.
    execute format(
      'insert into public.contacts (organization_id, %1$I, phone, first_name, source) values ($1, $2, $3, $4, $5)
       on conflict (organization_id, %1$I) do nothing returning id',
      case message_channel when 'whatsapp' then 'whatsapp_id' when 'messenger' then 'facebook_psid'
                           else 'instagram_id' end)
      into contact using org, identity, identity_phone, nullif(contact_name, ''), message_channel;
    if contact is null then
      execute format('select c.id from public.contacts c where c.organization_id = $1 and c.%I = $2',
                     case message_channel when 'whatsapp' then 'whatsapp_id' when 'messenger' then 'facebook_psid'
                                          else 'instagram_id' end)
        into contact using org, identity;
    end if;
    if contact is null then
      raise exception 'contact vanished between insert and select';
    end if;
  end if;

  select v.id into conversation from app.open_conversation(org, account, contact) v;

  insert into public.messages (organization_id, conversation_id, account_id, direction, type, body, content,
                               provider_message_id, status, received_at)
  values (org, conversation, account, 'in', message_type, message_body, message_content, provider_id,
          'received', coalesce(received, now()))
  on conflict (organization_id, account_id, provider_message_id) do nothing
  returning id into stored;
  return stored is not null;
end $$;
revoke all on function app.receive_message(uuid, uuid, text, text, text, text, text, text, jsonb, text, timestamptz)
  from public;
grant execute on function app.receive_message(uuid, uuid, text, text, text, text, text, text, jsonb, text, timestamptz)
  to service_role;

-- People and write agents triage their inbox: mark a conversation read and move it between open,
-- pending, resolved and snoozed. Only those two columns, and the unread count only back to 0:
-- how many messages arrived unread is the service's to count (app.record_message_activity).
grant update (status, unread_count) on public.conversations to authenticated;
create policy tenant_update on public.conversations for update to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.can_write()))
  with check (organization_id = (select app.current_org_id()));

create or replace function app.guard_conversation_triage() returns trigger
language plpgsql set search_path = ''
as $$
begin
  if current_setting('role', true) = 'authenticated'
     and new.unread_count is distinct from old.unread_count and new.unread_count <> 0 then
    raise exception 'A conversation''s unread count can only be reset to 0 (marked read)'
      using errcode = 'SV400', hint = 'validation_error',
            detail = json_build_object('issues', json_build_array(json_build_object(
              'path', 'unread_count', 'message', 'only 0 is accepted')))::text;
  end if;
  return new;
end $$;
create trigger conversations_triage before update on public.conversations
  for each row execute function app.guard_conversation_triage();

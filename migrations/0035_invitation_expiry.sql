-- Owners and admins may set when a pending invitation expires, within a bound. What this file
-- guarantees:
-- * organization_invitations.expires_at is writable by the organization's owners and admins
--   (the same row-level policy as `role`), to any time in the future at most 30 days from now:
--   anything else is 400 validation_error naming the column. Setting it on an expired invitation
--   makes it pending again, with the mail already sent (its token unchanged).
-- * Any other change by a person (a new role, a re-sent invitation through organization-members)
--   still makes them the inviter and runs at least seven days from then, and never shortens an
--   expiry an owner or admin chose.
-- * Inserting still runs seven days (the column is not insertable), and the inviter is still
--   never the caller's choice.

grant update (role, expires_at) on public.organization_invitations to authenticated;

create or replace function app.prepare_invitation() returns trigger
language plpgsql
as $$
begin
  if current_user = 'authenticated' then
    new.invited_by := auth.uid();
    if tg_op = 'UPDATE' and new.expires_at is distinct from old.expires_at then
      if new.expires_at <= pg_catalog.now() or new.expires_at > pg_catalog.now() + interval '30 days' then
        raise exception 'An invitation''s expires_at must be in the future and at most 30 days from now'
          using errcode = 'SV400', hint = 'validation_error',
                detail = json_build_object(
                  'issues', json_build_array(json_build_object(
                    'path', 'expires_at',
                    'message', 'must be in the future and at most 30 days from now')),
                  'max_days', 30)::text;
      end if;
    elsif tg_op = 'UPDATE' then
      new.expires_at := greatest(old.expires_at, pg_catalog.now() + interval '7 days');
    else
      new.expires_at := pg_catalog.now() + interval '7 days';
    end if;
  end if;
  return new;
end $$;

-- Accepting an invitation needs the secret from its mail. What this file guarantees:
-- * An account whose email matches is not enough to accept: sign-up does not prove an address,
--   so whoever registered the invited email first could otherwise join (as an owner, if so
--   invited). app.accept_invitation and app.decline_invitation now also take the SHA-256 of the
--   token the mail carried, and a wrong or missing one finds nothing (the same as an unknown id).
-- * Only the hash is stored (token_hash). It is set by app.issue_invitation_token, which the
--   service calls each time it (re)sends the mail: a new token per mail, so an older link dies.
--   /rest/v1 cannot set it (no column grant): an invitation written there has no working link
--   until it is sent through organization-members.
-- * Invitations made before this migration have no token and cannot be accepted until refreshed
--   (their mails carried none).

alter table public.organization_invitations add column token_hash text;
-- Not even the hash is shown to owners and admins (as with agent_api_keys): it is nobody's business.
revoke select on public.organization_invitations from authenticated;
grant select (organization_id, id, email, role, invited_by, expires_at, created_at, updated_at)
  on public.organization_invitations to authenticated;

-- Owners and admins of the current organization only, like any write to its invitations.
create or replace function app.issue_invitation_token(invitation uuid, secret_hash text) returns boolean
language sql volatile security definer set search_path = ''
as $$
  with done as (
    update public.organization_invitations i set token_hash = secret_hash
     where i.id = invitation and i.organization_id = app.current_org_id() and app.is_org_admin()
    returning 1)
  select exists (select 1 from done)
$$;

drop function app.accept_invitation(uuid);
drop function app.decline_invitation(uuid);

-- As in 0008 (a membership the caller already has is kept), and the token must match.
create function app.accept_invitation(invitation uuid, secret_hash text)
returns table (organization_id uuid, role text)
language plpgsql security definer set search_path = ''
as $$
declare
  inv public.organization_invitations;
begin
  delete from public.organization_invitations i
   where i.id = invitation and i.token_hash = secret_hash and i.email = app.caller_email()
     and i.expires_at > pg_catalog.now()
  returning * into inv;
  if inv.id is null then
    return;
  end if;
  insert into public.organization_members (organization_id, user_id, role)
  values (inv.organization_id, auth.uid(), inv.role)
  on conflict on constraint organization_members_pkey do nothing;
  return query select m.organization_id, m.role from public.organization_members m
    where m.organization_id = inv.organization_id and m.user_id = auth.uid();
end $$;

-- The token too, so someone holding the address without the mail cannot silently decline.
create function app.decline_invitation(invitation uuid, secret_hash text) returns boolean
language sql volatile security definer set search_path = ''
as $$
  with gone as (
    delete from public.organization_invitations i
     where i.id = invitation and i.token_hash = secret_hash and i.email = app.caller_email()
    returning 1)
  select exists (select 1 from gone)
$$;

revoke all on function app.issue_invitation_token(uuid, text), app.accept_invitation(uuid, text),
  app.decline_invitation(uuid, text) from public;
grant execute on function app.issue_invitation_token(uuid, text), app.accept_invitation(uuid, text),
  app.decline_invitation(uuid, text) to authenticated;

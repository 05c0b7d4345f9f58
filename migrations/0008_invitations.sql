-- Members join by invitation. What this file guarantees:
-- * Nobody becomes a member of an organization without accepting: people can no longer insert
--   into organization_members; the only way in (besides creating an organization) is
--   app.accept_invitation, which checks that the invitation is addressed to the caller's email,
--   still pending and unexpired, and that the caller holds the secret its mail carried.
-- * An account whose email matches is not enough: sign-up does not prove an address, so whoever
--   registered the invited email first could otherwise join (as an owner, if so invited).
--   Accepting and declining take the SHA-256 of the mail's token; a wrong or missing one finds
--   nothing (the same as an unknown id). Only the hash is stored (token_hash), set by
--   app.issue_invitation_token each time the service (re)sends the mail, so an older link dies.
--   /rest/v1 cannot set it: an invitation written there has no working link until it is sent
--   through organization-members.
-- * An invitation is a tenant row like any other ((organization_id, id) key, RLS), readable and
--   writable by the organization's owners and admins only; only an owner may invite an owner
--   (the rule guard_owners applies to memberships).
-- * The invitee sees their own invitations through security-definer functions that match the
--   caller's account email; auth.users stays private, and an inviter learns nothing about whether
--   an email is registered.
-- * One pending invitation per (organization, email): inviting again refreshes it (any change by
--   a person makes them the inviter and runs seven days from then). Accepted, declined and
--   withdrawn invitations are deleted; expired ones stay until refreshed or withdrawn.

create table public.organization_invitations (
  organization_id uuid not null references public.organizations (id) on delete cascade,
  id uuid not null default gen_random_uuid() unique,
  email text not null check (email = lower(btrim(email)) and length(email) between 3 and 320),
  role text not null check (role in ('owner', 'admin', 'member')),
  invited_by uuid references auth.users (id) on delete set null,
  expires_at timestamptz not null default now() + interval '7 days',
  token_hash text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (organization_id, id),
  unique (organization_id, email)
);
-- "Invitations to me" looks rows up by email across organizations.
create index organization_invitations_email_idx on public.organization_invitations (email);
create index organization_invitations_invited_by_idx on public.organization_invitations (invited_by);
create trigger organization_invitations_touch before insert or update on public.organization_invitations
  for each row execute function app.touch_timestamps();

-- Whoever writes an invitation through the API is its inviter, and it runs seven days from then:
-- neither can be chosen by the caller (a forged inviter would show the invitee someone else's
-- email; a far expiry would defeat the rule). The service path (owner, service_role) may set them.
create or replace function app.prepare_invitation() returns trigger
language plpgsql
as $$
begin
  if current_user = 'authenticated' then
    new.invited_by := auth.uid();
    new.expires_at := pg_catalog.now() + interval '7 days';
  end if;
  return new;
end $$;
create trigger organization_invitations_prepare before insert or update on public.organization_invitations
  for each row execute function app.prepare_invitation();

alter table public.organization_invitations enable row level security;
-- Not even the hash is shown to owners and admins (as with agent_api_keys).
grant select (organization_id, id, email, role, invited_by, expires_at, created_at, updated_at)
  on public.organization_invitations to authenticated;
grant delete on public.organization_invitations to authenticated;
grant insert (organization_id, email, role) on public.organization_invitations to authenticated;
grant update (role) on public.organization_invitations to authenticated;
grant all on public.organization_invitations to service_role;
create policy invitations_select on public.organization_invitations for select to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()));
create policy invitations_insert on public.organization_invitations for insert to authenticated
  with check (organization_id = (select app.current_org_id()) and (select app.is_org_admin())
              and (role <> 'owner' or (select app.org_role()) = 'owner'));
create policy invitations_update on public.organization_invitations for update to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()))
  with check (organization_id = (select app.current_org_id())
              and (role <> 'owner' or (select app.org_role()) = 'owner'));
create policy invitations_delete on public.organization_invitations for delete to authenticated
  using (organization_id = (select app.current_org_id()) and (select app.is_org_admin()));

-- Joining is accepting: people may no longer add anyone to a roster directly.
drop policy members_insert on public.organization_members;
revoke insert on public.organization_members from authenticated;
-- It let owners and admins learn whether an email has an account.
drop function app.find_user_id(text);

-- The signed-in person's account email (never an agent's).
create or replace function app.caller_email() returns text
language sql stable security definer set search_path = ''
as $$
  select u.email from auth.users u where u.id = auth.uid() and not app.is_agent()
$$;

-- Pending, unexpired invitations addressed to the caller, with what a person needs to decide.
create or replace function app.my_invitations()
returns table (id uuid, organization_id uuid, organization_name text, role text,
               invited_by_email text, expires_at timestamptz, created_at timestamptz)
language sql stable security definer set search_path = ''
as $$
  select i.id, i.organization_id, o.name, i.role, u.email, i.expires_at, i.created_at
    from public.organization_invitations i
    join public.organizations o on o.id = i.organization_id
    left join auth.users u on u.id = i.invited_by
   where i.email = app.caller_email() and i.expires_at > pg_catalog.now()
   order by i.created_at, i.id
$$;

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

-- Accepting makes the caller a member with the invited role; a membership they already have is
-- kept as it is. Returns the organization and the role the caller has there, or nothing when no
-- pending invitation with that id and token is addressed to the caller.
create or replace function app.accept_invitation(invitation uuid, secret_hash text)
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

-- Declining deletes the invitation; expired ones may be declined too (tidying the list). The token
-- too, so someone holding the address without the mail cannot silently decline.
create or replace function app.decline_invitation(invitation uuid, secret_hash text) returns boolean
language sql volatile security definer set search_path = ''
as $$
  with gone as (
    delete from public.organization_invitations i
     where i.id = invitation and i.token_hash = secret_hash and i.email = app.caller_email()
    returning 1)
  select exists (select 1 from gone)
$$;

-- Whether an email is already on the current organization's roster, for owners and admins
-- inviting it (they see the roster's emails anyway, so this tells them nothing new).
create or replace function app.is_member_email(lookup_email text) returns boolean
language sql stable security definer set search_path = ''
as $$
  select app.is_org_admin() and exists (
    select 1 from public.organization_members m join auth.users u on u.id = m.user_id
     where m.organization_id = app.current_org_id() and u.email = lower(btrim(lookup_email)))
$$;

revoke all on function app.my_invitations(), app.issue_invitation_token(uuid, text),
  app.accept_invitation(uuid, text), app.decline_invitation(uuid, text), app.caller_email(),
  app.is_member_email(text) from public;
grant execute on function app.my_invitations(), app.issue_invitation_token(uuid, text),
  app.accept_invitation(uuid, text), app.decline_invitation(uuid, text), app.caller_email(),
  app.is_member_email(text) to authenticated;

-- Connected accounts are proven, not claimed (issue 27). What this file guarantees:
-- * An account records when the provider last confirmed that its token acts for its external id
--   (verified_at), how it was connected (verified_by: 'oauth' through the provider's sign-in,
--   'token' for a pasted token the service checked), when its token expires if the provider says
--   (token_expires_at), when the connection check last ran (checked_at), and, when the token no
--   longer works, since when and the provider's reason (needs_reconnect_at, needs_reconnect_reason).
-- * One (provider, external_id) is live at most once per organization, no longer once across the
--   service: an agency and the business may both prove access to one Page, and a claim by another
--   organization can neither block a connect nor be learned from its answer. Inbound deliveries
--   go to the live, verified claim proven most recently (docs/decisions.md "Who receives an
--   account's deliveries"), found through connected_accounts_route_idx.
-- * Accounts connected before this file were never proven: they need a reconnect until the
--   connection check (src/jobs/check-connections.ts) proves their token, and they receive no
--   deliveries until then.

alter table app.connected_accounts
  add column verified_at timestamptz,
  add column verified_by text check (verified_by in ('oauth', 'token')),
  add column token_expires_at timestamptz,
  add column checked_at timestamptz,
  add column needs_reconnect_at timestamptz,
  add column needs_reconnect_reason text check (length(needs_reconnect_reason) <= 1000),
  add constraint connected_accounts_verified_by check ((verified_at is null) = (verified_by is null));

update app.connected_accounts
   set needs_reconnect_at = now(),
       needs_reconnect_reason = 'Connected before the service checked ownership: connect it again to prove access'
 where disconnected_at is null;

drop index app.connected_accounts_live_key;
create unique index connected_accounts_live_key on app.connected_accounts (organization_id, provider, external_id)
  where disconnected_at is null;
create index connected_accounts_route_idx on app.connected_accounts (provider, external_id, verified_at desc)
  where disconnected_at is null and verified_at is not null;

grant select (verified_at, verified_by, token_expires_at, checked_at, needs_reconnect_at, needs_reconnect_reason)
  on app.connected_accounts to authenticated;
grant insert (verified_at, verified_by, token_expires_at, checked_at)
  on app.connected_accounts to authenticated;
grant update (verified_at, verified_by, token_expires_at, checked_at, needs_reconnect_at, needs_reconnect_reason)
  on app.connected_accounts to authenticated;

-- The view keeps its columns in order and adds the new ones after them (create or replace view
-- may only append). `status` now has three values.
create or replace view public.connected_accounts with (security_invoker = true) as
  select a.organization_id, a.id, a.provider, a.external_id, a.name,
         case when a.disconnected_at is not null then 'disconnected'
              when a.needs_reconnect_at is not null then 'needs_reconnect'
              else 'connected' end as status,
         a.has_webhook_secret, a.created_by, a.disconnected_at, a.created_at, a.updated_at,
         a.verified_at, a.verified_by, a.token_expires_at, a.checked_at, a.needs_reconnect_reason
    from app.connected_accounts a;

-- An app installed through Shopify's OAuth signs deliveries with the app's own secret
-- (SHOPIFY_API_SECRET): only a shop connected with a pasted custom-app token has a secret of its own.
alter table app.connected_accounts drop constraint connected_accounts_check;

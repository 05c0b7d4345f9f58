-- Keys that hold within one organization (issue 29, section 6: every tenant table can be
-- distributed by organization_id; the rule and its known gaps: test/platform/distribution-ready.test.ts,
-- the plan: docs/operations.md "Distributing by organization"). Citus enforces a unique key only
-- within a shard, so each one must include organization_id. What this file changes:
-- * agent_api_keys and organization_invitations lose `unique (id)`. Every lookup by id also names
--   the organization (app.establish_context, src/domain/key-check.ts, organization-info.ts,
--   app.issue_invitation_token) or goes through RLS; the one that does not
--   (app.accept_invitation) also matches the token hash and the invitee's address. The id is
--   always gen_random_uuid(): no API role may write it. The primary key (organization_id, id)
--   stays, and with it the foreign key messages → agent_api_keys.
-- * connect_states' primary key becomes (organization_id, id): nothing refers to it, and the
--   service finds a state by its hash (still unique across the service: the callback brings back
--   only the state; docs/operations.md names it as a gap).
-- * webhook_events gains unique (organization_id, provider, delivery_id, account_id), which the
--   receipts name in ON CONFLICT from this release on. The old unique (provider, delivery_id,
--   account_id) stays one release longer: the previous release's receipts name it, and it runs
--   beside this migration during a rolling deploy (docs/operations.md, "Deploying"). Connected
--   account ids are gen_random_uuid(), so an account id names one organization and the two
--   refuse the same rows; the new key's columns include the old one's, so rows already stored
--   satisfy it. Until the old one goes, an event's insert updates one index more.

alter table public.agent_api_keys drop constraint agent_api_keys_id_key;
alter table public.organization_invitations drop constraint organization_invitations_id_key;

alter table app.connect_states drop constraint connect_states_pkey,
  add primary key (organization_id, id);

create unique index webhook_events_delivery_account_key
  on app.webhook_events (organization_id, provider, delivery_id, account_id);

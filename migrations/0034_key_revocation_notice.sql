-- A revoked agent key is refused by every process at once. What this file guarantees:
-- * Revoking a key (is_active to false), shortening its life (expires_at earlier) or deleting it
--   (an organization's deletion cascades here) sends NOTIFY svc_agent_key_revoked when its
--   transaction commits, on whatever path wrote it (/rest/v1, the service path, plain SQL).
--   Every service process LISTENs and forgets its remembered key checks
--   (src/domain/key-check.ts), so the MCP endpoint of another process refuses the key's live
--   tokens at its next request, not after its cache runs out.
-- * The payload is the key's id, for tools watching the channel; the service forgets all (one
--   lookup per live key follows, which costs less than tracking whose answer is whose).

create or replace function app.announce_key_revocation() returns trigger
language plpgsql
as $$
begin
  perform pg_catalog.pg_notify('svc_agent_key_revoked', old.id::text);
  return null;
end $$;

create trigger agent_api_keys_revoked_notice after update of is_active, expires_at on public.agent_api_keys
  for each row when ((old.is_active and not new.is_active) or new.expires_at < old.expires_at)
  execute function app.announce_key_revocation();
create trigger agent_api_keys_deleted_notice after delete on public.agent_api_keys
  for each row execute function app.announce_key_revocation();

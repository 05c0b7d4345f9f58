import { requireScope } from '../domain/agent-keys.ts';
import type { Principal } from '../platform/db/database.ts';
import { agentKeyGone, forbidden, unauthorized } from '../platform/errors.ts';
import { assertOrganization } from '../platform/http/require-organization.ts';
import type { Services } from '../services.ts';

// Who may touch which folder of the bucket. The organization comes from the database, not from
// the token alone: app.establish_context (migrations/0013) checks the membership or the agent's
// key on every request, so a removed member or a revoked key loses the files at once, exactly as
// it loses the rows. An organization sees one top-level folder, its id; the service role, all.

export type Need = 'read' | 'write';

/** The caller's organization (its folder), or null for the service role (every folder). */
export async function folderOf(
  s: Services,
  principal: Principal,
  need: Need,
  what: string,
): Promise<string | null> {
  if (principal.kind === 'service') return null;
  if (principal.kind === 'anon')
    throw unauthorized('The social-media bucket is private: send a user or agent JWT');
  assertOrganization(principal);
  // Agents: the scope first, so the refusal names its remedy (plan, key, or a fresh token).
  await requireScope(s, principal, need, what);
  const [row] = await s.db.queryAs<{ org: string | null; can_read: boolean; can_write: boolean }>(
    principal,
    'select app.current_org_id()::text as org, app.can_read() as can_read, app.can_write() as can_write',
    [],
    { readOnly: true },
  );
  if (!row?.org) {
    if (principal.kind === 'agent') throw agentKeyGone();
    throw forbidden('You are no longer a member of the organization this token acts in');
  }
  if (!(need === 'read' ? row.can_read : row.can_write)) throw forbidden(`${what} is not allowed for you`);
  return row.org;
}

/** Whether `path` (inside the bucket) lies in the folder the caller may use. */
export const inFolder = (folder: string | null, path: string) =>
  folder === null || path.startsWith(`${folder}/`);

import type { Database } from '../platform/db/database.ts';
import { notFound } from '../platform/errors.ts';
import { type SessionDeps, startSession, type TokenResponse } from './session.ts';
import { findUserById } from './users.ts';

/**
 * Makes `organizationId` the user's current organization, in one statement that also checks the
 * membership, and replaces the calling session with a new one whose claims name it: the old
 * session's refresh tokens die with it. Another tenant's id and a made-up one both answer 404.
 */
export async function switchOrganization(
  deps: SessionDeps,
  db: Database,
  caller: { userId: string; sessionId: string },
  organizationId: string,
  meta: { ip: string; userAgent: string | undefined },
): Promise<TokenResponse> {
  return db.transaction(async (tx) => {
    const moved = await tx.query(
      `update auth.users u set current_organization_id = $2
        where u.id = $1
          and exists (select 1 from public.organization_members m where m.user_id = u.id and m.organization_id = $2)
        returning u.id`,
      [caller.userId, organizationId],
    );
    const user = moved.length ? await findUserById(tx, caller.userId) : undefined;
    if (!user) throw notFound('organization');
    await tx.query('delete from auth.sessions where id = $1 and user_id = $2', [
      caller.sessionId,
      caller.userId,
    ]);
    return startSession(deps, tx, user, meta);
  });
}

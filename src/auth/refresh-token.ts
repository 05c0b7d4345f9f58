import type { Database } from '../platform/db/database.ts';
import { hashOpaqueToken } from '../platform/opaque-token.ts';
import { refreshTokenAlreadyUsed, refreshTokenNotFound } from './errors.ts';
import { continueSession, type SessionDeps, type TokenResponse } from './session.ts';
import { findUserById } from './users.ts';

type Stored = {
  token_hash: string;
  revoked: boolean;
  age_seconds: number;
  session_id: string;
  user_id: string;
  session_created_at: Date;
  active_child: string | null;
};

/**
 * Rotation as GoTrue does it: each use revokes the token and issues its child. A revoked token
 * that is the parent of the session's active token stands for it (a client that lost the answer),
 * so the active token is rotated in its place: we keep hashes only, so we cannot hand the active
 * one back. Any other revoked token is tolerated within the reuse interval and is a replay after
 * it: the whole family (the session) is revoked.
 */
export async function rotateRefreshToken(
  deps: SessionDeps,
  db: Database,
  refreshToken: string,
  reuseIntervalSeconds: number,
): Promise<TokenResponse> {
  const hash = hashOpaqueToken(refreshToken);
  const outcome = await db.transaction(async (tx) => {
    const [rt] = await tx.query<Stored>(
      `select t.token_hash, t.revoked, extract(epoch from now() - t.updated_at)::float8 as age_seconds,
              t.session_id, t.user_id, s.created_at as session_created_at,
              (select c.token_hash from auth.refresh_tokens c
                where c.parent_hash = t.token_hash and not c.revoked limit 1) as active_child
         from auth.refresh_tokens t join auth.sessions s on s.id = t.session_id
        where t.token_hash = $1
        for update of t, s`,
      [hash],
    );
    if (!rt) return { error: refreshTokenNotFound() };
    let parent = hash;
    if (rt.revoked && rt.active_child) parent = rt.active_child;
    else if (rt.revoked && rt.age_seconds > reuseIntervalSeconds) {
      await tx.query('delete from auth.sessions where id = $1', [rt.session_id]);
      return { error: refreshTokenAlreadyUsed() };
    }
    await tx.query('update auth.refresh_tokens set revoked = true where token_hash = $1 and not revoked', [
      parent,
    ]);
    const user = await findUserById(tx, rt.user_id);
    if (!user) return { error: refreshTokenNotFound() };
    const session = { id: rt.session_id, created_at: rt.session_created_at };
    return { session: await continueSession(deps, tx, user, session, parent) };
  });
  // The family's revocation above is committed before the caller hears about it.
  if ('error' in outcome) throw outcome.error;
  return outcome.session;
}

import type { Queryable } from '../platform/db/database.ts';
import type { Tokens } from '../platform/jwt.ts';
import { newOpaqueToken } from '../platform/opaque-token.ts';
import { appMetadata, type UserRow, userJson } from './users.ts';

export type SessionDeps = { tokens: Tokens; expiresIn: number };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a token's session is still alive (not logged out, not revoked for token reuse). */
export async function sessionExists(db: Queryable, userId: string, sessionId: string): Promise<boolean> {
  if (!UUID.test(sessionId) || !UUID.test(userId)) return false;
  return (
    (await db.query('select 1 from auth.sessions where id = $1 and user_id = $2', [sessionId, userId]))
      .length > 0
  );
}

const END_SESSIONS = {
  global: 'delete from auth.sessions where user_id = $1',
  local: 'delete from auth.sessions where user_id = $1 and id = $2',
  others: 'delete from auth.sessions where user_id = $1 and id <> $2',
} as const;

/** Ends sessions; their refresh tokens go with them (foreign key cascade). */
export async function endSessions(
  db: Queryable,
  scope: keyof typeof END_SESSIONS,
  userId: string,
  sessionId: string,
) {
  await db.query(END_SESSIONS[scope], scope === 'global' ? [userId] : [userId, sessionId]);
}

/** The access token claims: spec 2.5 for people, plus what GoTrue and auth-js's getClaims need. */
export function accessClaims(user: UserRow, sessionId: string, signedInAt: number) {
  return {
    sub: user.id,
    aud: 'authenticated',
    role: 'authenticated',
    email: user.email,
    phone: '',
    app_metadata: appMetadata(user),
    user_metadata: user.raw_user_meta_data,
    aal: 'aal1',
    amr: [{ method: 'password', timestamp: signedInAt }],
    session_id: sessionId,
    is_anonymous: false,
  };
}

async function tokenResponse(
  deps: SessionDeps,
  user: UserRow,
  sessionId: string,
  refreshToken: string,
  signedInAt: number,
) {
  const now = Math.floor(Date.now() / 1000);
  return {
    access_token: await deps.tokens.sign(accessClaims(user, sessionId, signedInAt), deps.expiresIn),
    token_type: 'bearer' as const,
    expires_in: deps.expiresIn,
    expires_at: now + deps.expiresIn,
    refresh_token: refreshToken,
    user: userJson(user),
  };
}

export type TokenResponse = Awaited<ReturnType<typeof tokenResponse>>;

/** A new session (token family) for a user who just proved who they are. */
export async function startSession(
  deps: SessionDeps,
  tx: Queryable,
  user: UserRow,
  meta: { ip: string; userAgent: string | undefined },
): Promise<TokenResponse> {
  const [session] = await tx.query<{ id: string; created_at: Date }>(
    'insert into auth.sessions (user_id, ip, user_agent) values ($1, $2, $3) returning id, created_at',
    [user.id, meta.ip, meta.userAgent?.slice(0, 500) ?? null],
  );
  const s = session as { id: string; created_at: Date };
  const refresh = newOpaqueToken();
  await tx.query('insert into auth.refresh_tokens (token_hash, user_id, session_id) values ($1, $2, $3)', [
    refresh.hash,
    user.id,
    s.id,
  ]);
  await tx.query('update auth.users set last_sign_in_at = now() where id = $1', [user.id]);
  user.last_sign_in_at = new Date();
  return tokenResponse(deps, user, s.id, refresh.token, Math.floor(s.created_at.getTime() / 1000));
}

/** The next token of a family: a child of `parentHash`, with claims read afresh from the database. */
export async function continueSession(
  deps: SessionDeps,
  tx: Queryable,
  user: UserRow,
  session: { id: string; created_at: Date },
  parentHash: string,
): Promise<TokenResponse> {
  const refresh = newOpaqueToken();
  await tx.query(
    'insert into auth.refresh_tokens (token_hash, parent_hash, user_id, session_id) values ($1, $2, $3, $4)',
    [refresh.hash, parentHash, user.id, session.id],
  );
  await tx.query('update auth.sessions set refreshed_at = now() where id = $1', [session.id]);
  return tokenResponse(
    deps,
    user,
    session.id,
    refresh.token,
    Math.floor(session.created_at.getTime() / 1000),
  );
}

import type { Queryable } from '../platform/db/database.ts';
import type { Tokens } from './jwt.ts';
import { newRefreshToken } from './refresh-token.ts';
import { appMetadata, type UserRow, userJson } from './users.ts';

export type SessionDeps = { tokens: Tokens; expiresIn: number };

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
  const refresh = newRefreshToken();
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
  const refresh = newRefreshToken();
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

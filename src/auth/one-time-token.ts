import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../platform/db/database.ts';

// Recovery tokens as GoTrue has them: a link token and a 6-digit code in the same mail, either of
// which signs the person in once. Both are stored as SHA-256 only (auth.one_time_tokens).

export type TokenType = 'recovery';

/** Wrong codes a token survives; then it is dead, long before 10^6 codes can be tried. */
export const MAX_CODE_ATTEMPTS = 5;

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
export const hashLinkToken = (token: string) => sha256(`link:${token}`);
// Salted with the user id: a leaked table does not give one lookup table for every code.
const hashCode = (userId: string, code: string) => sha256(`code:${userId}:${code}`);

/**
 * A fresh token for the user, replacing any live one of the same type (only the newest mail works).
 * Returns the secrets to put in the mail; nothing else ever sees them.
 */
export async function issueToken(
  tx: Queryable,
  input: { userId: string; type: TokenType; ttlSeconds: number },
): Promise<{ token: string; code: string }> {
  const token = randomBytes(32).toString('base64url');
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await tx.query(
    `insert into auth.one_time_tokens (user_id, token_type, link_hash, code_hash, expires_at)
     values ($1, $2, $3, $4, now() + make_interval(secs => $5))
     on conflict (user_id, token_type) do update
       set link_hash = excluded.link_hash, code_hash = excluded.code_hash,
           expires_at = excluded.expires_at, failed_attempts = 0, used_at = null`,
    [input.userId, input.type, hashLinkToken(token), hashCode(input.userId, code), input.ttlSeconds],
  );
  return { token, code };
}

/** Uses up the token behind a link; the user it signs in, or undefined (unknown, used, expired). */
export async function consumeLinkToken(
  tx: Queryable,
  type: TokenType,
  token: string,
): Promise<{ userId: string } | undefined> {
  const [row] = await tx.query<{ user_id: string }>(
    `update auth.one_time_tokens set used_at = now()
      where link_hash = $1 and token_type = $2 and used_at is null and expires_at > now()
        and failed_attempts < $3
      returning user_id`,
    [hashLinkToken(token), type, MAX_CODE_ATTEMPTS],
  );
  return row && { userId: row.user_id };
}

/**
 * Checks a code typed by the person who holds `email`. A wrong code counts against the token (the
 * caller must commit that even though it answers with an error); the right one uses it up.
 */
export async function consumeCode(
  tx: Queryable,
  type: TokenType,
  email: string,
  code: string,
): Promise<{ userId: string } | undefined> {
  const [row] = await tx.query<{ id: string; user_id: string; code_hash: string }>(
    `select t.id, t.user_id, t.code_hash from auth.one_time_tokens t join auth.users u on u.id = t.user_id
      where u.email = $1 and t.token_type = $2 and t.used_at is null and t.expires_at > now()
        and t.failed_attempts < $3
      for update of t`,
    [email, type, MAX_CODE_ATTEMPTS],
  );
  if (!row) return undefined;
  const given = Buffer.from(hashCode(row.user_id, code), 'hex');
  if (!timingSafeEqual(given, Buffer.from(row.code_hash, 'hex'))) {
    await tx.query('update auth.one_time_tokens set failed_attempts = failed_attempts + 1 where id = $1', [
      row.id,
    ]);
    return undefined;
  }
  await tx.query('update auth.one_time_tokens set used_at = now() where id = $1', [row.id]);
  return { userId: row.user_id };
}

import { createHash, randomBytes } from 'node:crypto';

/** Opaque to the client; only its SHA-256 is stored, so a database leak yields no usable token. */
export function newRefreshToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashRefreshToken(token) };
}

export const hashRefreshToken = (token: string) => createHash('sha256').update(token).digest('hex');

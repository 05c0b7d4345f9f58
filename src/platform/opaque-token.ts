import { createHash, randomBytes } from 'node:crypto';

/**
 * A random secret (32 bytes, base64url) and its SHA-256 hex, the only form ever stored, so a
 * database leak yields no usable token: refresh tokens and invitation tokens.
 */
export function newOpaqueToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashOpaqueToken(token) };
}

export const hashOpaqueToken = (token: string) => createHash('sha256').update(token).digest('hex');

import { createLocalJWKSet, errors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import type { SigningKeys } from './signing-keys.ts';

export type Claims = JWTPayload & Record<string, unknown>;

export class TokenError extends Error {
  constructor(readonly reason: 'expired' | 'invalid') {
    super(reason === 'expired' ? 'The token has expired' : 'The token is malformed or badly signed');
  }
}

const VERIFIED_CACHE_SIZE = 10_000;

export type Tokens = {
  sign(claims: Claims, expiresInSeconds: number): Promise<string>;
  /** Verifies signature (ES256, our kid), expiry and shape; throws TokenError. */
  verify(token: string): Promise<Claims>;
  jwks(): { keys: object[] };
};

export function createTokens(keys: SigningKeys, issuer: string): Tokens {
  const jwks = createLocalJWKSet({ keys: [keys.publicJwk] });
  const verified = new Map<string, Claims>(); // oldest first: evicted in insertion order
  return {
    async sign(claims, expiresInSeconds) {
      const iat = Math.floor(Date.now() / 1000);
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: keys.kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setIssuedAt(iat)
        .setExpirationTime(iat + expiresInSeconds)
        .sign(keys.privateKey);
    },
    async verify(token) {
      // A signature checked once stays checked: the same token (the anon key, an agent's JWT)
      // arrives on every request, and an ES256 verification costs more than the query it guards.
      const known = verified.get(token);
      if (known) {
        if (typeof known.exp === 'number' && known.exp <= Date.now() / 1000) throw new TokenError('expired');
        return known;
      }
      try {
        const { payload } = await jwtVerify(token, jwks, { algorithms: ['ES256'] });
        if (typeof payload.role !== 'string') throw new TokenError('invalid');
        if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value as string);
        verified.set(token, payload as Claims);
        return payload as Claims;
      } catch (err) {
        if (err instanceof errors.JWTExpired) throw new TokenError('expired');
        throw new TokenError('invalid');
      }
    },
    jwks: () => ({ keys: [keys.publicJwk] }),
  };
}

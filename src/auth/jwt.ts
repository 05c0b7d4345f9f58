import { createLocalJWKSet, errors, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import type { SigningKeys } from './signing-keys.ts';

export type Claims = JWTPayload & Record<string, unknown>;

export class TokenError extends Error {
  constructor(readonly reason: 'expired' | 'invalid') {
    super(reason === 'expired' ? 'The token has expired' : 'The token is malformed or badly signed');
  }
}

export type Tokens = {
  sign(claims: Claims, expiresInSeconds: number): Promise<string>;
  /** Verifies signature (ES256, our kid), expiry and shape; throws TokenError. */
  verify(token: string): Promise<Claims>;
  jwks(): { keys: object[] };
};

export function createTokens(keys: SigningKeys, issuer: string): Tokens {
  const jwks = createLocalJWKSet({ keys: [keys.publicJwk] });
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
      try {
        const { payload } = await jwtVerify(token, jwks, { algorithms: ['ES256'] });
        if (typeof payload.role !== 'string') throw new TokenError('invalid');
        return payload as Claims;
      } catch (err) {
        if (err instanceof errors.JWTExpired) throw new TokenError('expired');
        throw new TokenError('invalid');
      }
    },
    jwks: () => ({ keys: [keys.publicJwk] }),
  };
}

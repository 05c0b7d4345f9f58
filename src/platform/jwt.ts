import { createLocalJWKSet, errors, type JWK, type JWTPayload, jwtVerify, SignJWT } from 'jose';

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
  /**
   * The claims of a token `verify` accepted before, checked for expiry (TokenError), without a
   * promise; undefined for a token not seen yet. The common case of every request.
   */
  known(token: string): Claims | undefined;
  jwks(): { keys: object[] };
};

/** The key tokens are signed with (src/auth/signing-keys.ts loads or makes it). */
export type SigningKey = { kid: string; privateKey: CryptoKey; publicJwk: JWK };

export function createTokens(keys: SigningKey, issuer: string): Tokens {
  const jwks = createLocalJWKSet({ keys: [keys.publicJwk] });
  // Keyed by the token's last characters, which are its signature's: a Map hashes its string keys,
  // and a header's token is a new string on every request, hundreds of characters long. The full
  // token is compared on a hit, so two tokens ending alike can only miss the cache, never mix.
  const verified = new Map<string, { token: string; claims: Claims }>(); // oldest first: evicted first
  const keyOf = (token: string) => token.slice(-32);
  // A signature checked once stays checked: the same token (the anon key, an agent's JWT)
  // arrives on every request, and an ES256 verification costs more than the query it guards.
  const known = (token: string) => {
    const hit = verified.get(keyOf(token));
    if (hit === undefined || hit.token !== token) return undefined;
    const { exp } = hit.claims;
    if (typeof exp === 'number' && exp <= Date.now() / 1000) throw new TokenError('expired');
    return hit.claims;
  };
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
    known,
    async verify(token) {
      const claims = known(token);
      if (claims) return claims;
      const remember = (claims: Claims) => {
        if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value as string);
        verified.set(keyOf(token), { token, claims });
      };
      try {
        const { payload } = await jwtVerify(token, jwks, { algorithms: ['ES256'] });
        if (typeof payload.role !== 'string') throw new TokenError('invalid');
        remember(payload as Claims);
        return payload as Claims;
      } catch (err) {
        if (err instanceof errors.JWTExpired) {
          // Expiry is checked after the signature: a well-signed token past its time is
          // remembered too, so a client retrying it gets its 401 without another ES256 check.
          remember(err.payload as Claims);
          throw new TokenError('expired');
        }
        throw new TokenError('invalid');
      }
    },
    jwks: () => ({ keys: [keys.publicJwk] }),
  };
}

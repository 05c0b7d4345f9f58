// What this file protects: the token cache (src/platform/jwt.ts). A signature is checked once per
// token and every later request is answered from the cache, an expired token included (its
// 401 must not cost another signature check), while a token that fails its check is never
// remembered, so a forged one can never become known.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSigningKeys } from '../../src/auth/signing-keys.ts';
import { createTokens, TokenError, type Tokens } from '../../src/platform/jwt.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'svc-tokens-'));
let tokens: Tokens;
beforeAll(async () => {
  tokens = createTokens(await loadSigningKeys(dir), 'http://localhost/auth/v1');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const reason = async (p: Promise<unknown>) =>
  (
    (await p.then(
      () => null,
      (e) => e,
    )) as TokenError | null
  )?.reason;

describe('the token cache', () => {
  it('knows a token once verified, and only the very same token', async () => {
    const token = await tokens.sign({ role: 'authenticated', sub: 'u1' }, 60);
    expect(tokens.known(token)).toBeUndefined();
    expect((await tokens.verify(token)).sub).toBe('u1');
    expect(tokens.known(token)?.sub).toBe('u1');
    // The same signature's end after a different body: not the same token, so not known.
    const [, , signature] = token.split('.');
    const other = await tokens.sign({ role: 'authenticated', sub: 'u2' }, 60);
    const spliced = `${other.split('.').slice(0, 2).join('.')}.${signature}`;
    expect(tokens.known(spliced)).toBeUndefined();
    expect(await reason(tokens.verify(spliced))).toBe('invalid');
    expect(tokens.known(token)?.sub).toBe('u1');
  });

  it('remembers a well-signed expired token as expired, and never a badly signed one', async () => {
    const expired = await tokens.sign({ role: 'authenticated', sub: 'u3' }, -10);
    expect(await reason(tokens.verify(expired))).toBe('expired');
    // Answered from the cache now: no promise, no second signature check.
    expect(() => tokens.known(expired)).toThrow(TokenError);
    expect(await reason(tokens.verify(expired))).toBe('expired');
    const forged = `${expired.slice(0, -4)}AAAA`;
    expect(await reason(tokens.verify(forged))).toBe('invalid');
    expect(tokens.known(forged)).toBeUndefined();
  });
});

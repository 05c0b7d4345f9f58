import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSigningKeys } from '../../src/auth/signing-keys.ts';
import { createTokens } from '../../src/platform/jwt.ts';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'svc-keys-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('signing keys', () => {
  it('are generated once per data dir, kept private, and reloaded unchanged', async () => {
    const dir = tempDir();
    const [a, b] = await Promise.all([loadSigningKeys(dir), loadSigningKeys(dir)]);
    expect(b.kid).toBe(a.kid);
    expect(b.anonKey).toBe(a.anonKey);
    const file = path.join(dir, 'keys.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await loadSigningKeys(dir);
    expect(again.serviceRoleKey).toBe(a.serviceRoleKey);
    expect(again.publicJwk).not.toHaveProperty('d');
    expect(JSON.parse(readFileSync(file, 'utf8')).kid).toBe(a.kid);
  });

  it('can be given by configuration so several hosts verify each other’s tokens', async () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const [hostA, hostB] = await Promise.all([
      loadSigningKeys(tempDir(), pem),
      loadSigningKeys(tempDir(), pem),
    ]);
    expect(hostA.kid).toBe(hostB.kid);
    const token = await createTokens(hostA, 'https://a').sign({ role: 'authenticated', sub: 'x' }, 60);
    expect((await createTokens(hostB, 'https://b').verify(token)).sub).toBe('x');
    // Another key's tokens do not verify.
    const stranger = await loadSigningKeys(tempDir());
    await expect(createTokens(stranger, 'https://c').verify(token)).rejects.toThrow();
  });

  it('rejects tokens signed with another algorithm or tampered with', async () => {
    const keys = await loadSigningKeys(tempDir());
    const tokens = createTokens(keys, 'https://a');
    const good = await tokens.sign({ role: 'authenticated', sub: 'x' }, 60);
    const [h, p, s] = good.split('.') as [string, string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), role: 'service_role' }),
    ).toString('base64url');
    await expect(tokens.verify(`${h}.${forged}.${s}`)).rejects.toThrow();
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${p}.`;
    await expect(tokens.verify(none)).rejects.toThrow();
  });
});

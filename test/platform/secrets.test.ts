// Secrets at rest (src/platform/secrets.ts): what a sealed secret opens with, what it refuses,
// where the key comes from, and that a bad SECRETS_KEY stops the start with a clear message.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import {
  loadSecrets,
  parseSecretsKey,
  SECRETS_KEY_FILE,
  secretsWithKey,
} from '../../src/platform/secrets.ts';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'svc-secrets-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('sealing', () => {
  const secrets = secretsWithKey(randomBytes(32));

  it('opens what it sealed, in the same context, and never shows the plaintext in the sealed text', () => {
    const sealed = secrets.seal('EAAG-token-123', 'connected_accounts:org:acc:access_token');
    expect(sealed).toMatch(/^v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('EAAG');
    expect(secrets.open(sealed, 'connected_accounts:org:acc:access_token')).toBe('EAAG-token-123');
  });

  it('seals the same plaintext differently each time (a fresh IV)', () => {
    expect(secrets.seal('x', 'c')).not.toBe(secrets.seal('x', 'c'));
  });

  it('refuses a sealed text opened for another record or column (the context is bound)', () => {
    const sealed = secrets.seal('s3cret', 'connected_accounts:org-a:acc-1:access_token');
    expect(() => secrets.open(sealed, 'connected_accounts:org-b:acc-1:access_token')).toThrow(
      /does not open/,
    );
    expect(() => secrets.open(sealed, 'connected_accounts:org-a:acc-1:webhook_secret')).toThrow(
      /does not open/,
    );
  });

  it('refuses a tampered sealed text', () => {
    const sealed = secrets.seal('s3cret', 'ctx');
    const [v, id, body] = sealed.split(':') as [string, string, string];
    const raw = Buffer.from(body, 'base64url');
    raw[raw.length - 1] = (raw[raw.length - 1] as number) ^ 1;
    expect(() => secrets.open(`${v}:${id}:${raw.toString('base64url')}`, 'ctx')).toThrow(/does not open/);
    expect(() => secrets.open(`v2:${id}:${body}`, 'ctx')).toThrow(/format/);
    expect(() => secrets.open('plaintext', 'ctx')).toThrow(/format/);
  });

  it('says which key sealed a text another key cannot open', () => {
    const other = secretsWithKey(randomBytes(32));
    expect(() => other.open(secrets.seal('s', 'c'), 'c')).toThrow(/sealed with key [0-9a-f]{8}.*SECRETS_KEY/);
  });
});

describe('the key', () => {
  it('reads 32 bytes as hex or base64, and nothing else', () => {
    const key = randomBytes(32);
    expect(parseSecretsKey(key.toString('hex'))).toEqual(key);
    expect(parseSecretsKey(key.toString('base64'))).toEqual(key);
    expect(parseSecretsKey(key.toString('base64url'))).toEqual(key);
    expect(parseSecretsKey(randomBytes(16).toString('hex'))).toBeNull();
    expect(parseSecretsKey(randomBytes(31).toString('base64'))).toBeNull();
    expect(parseSecretsKey('correct horse battery staple')).toBeNull();
  });

  it('is generated on first start into DATA_DIR with mode 0600, and kept across starts', () => {
    const dir = tempDir();
    const first = loadSecrets(dir);
    const file = path.join(dir, SECRETS_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = loadSecrets(dir);
    expect(again.keyId).toBe(first.keyId);
    expect(again.open(first.seal('kept', 'c'), 'c')).toBe('kept');
    expect(parseSecretsKey(readFileSync(file, 'utf8'))).not.toBeNull();
  });

  it('comes from SECRETS_KEY when set, and the data dir is not written', () => {
    const dir = tempDir();
    const key = randomBytes(32);
    const config = loadConfig({ DATA_DIR: dir, SECRETS_KEY: key.toString('base64') });
    expect(config.secretsKey).toEqual(key);
    const secrets = loadSecrets(dir, config.secretsKey);
    expect(secrets.keyId).toBe(secretsWithKey(key).keyId);
    expect(() => statSync(path.join(dir, SECRETS_KEY_FILE))).toThrow();
  });

  it('refuses a malformed SECRETS_KEY at start, naming the variable but not quoting the value', () => {
    const bad = 'my-not-so-secret-key';
    let error: unknown;
    try {
      loadConfig({ SECRETS_KEY: bad });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/SECRETS_KEY: must be 32 random bytes/);
    expect((error as Error).message).not.toContain(bad);
  });
});

import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { publishFile } from './publish-file.ts';

// Secrets at rest (connected accounts' access tokens and webhook secrets): AES-256-GCM with one
// service key, from SECRETS_KEY or generated on first start into DATA_DIR/secrets.key (0600),
// beside the signing key. Takes in a plaintext and its context, gives out
//   v1:<key id>:<base64url(iv ‖ tag ‖ ciphertext)>
// where the key id (8 hex characters of the key's SHA-256) says which key sealed it, so a later
// rotation can keep old keys for decryption only. The context is GCM's additional data: a
// ciphertext copied into another row (another account, organization or column) does not open.

export const SECRETS_KEY_FILE = 'secrets.key';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type Secrets = {
  /** The id of the key that seals new secrets (not secret itself). */
  readonly keyId: string;
  seal(plaintext: string, context: string): string;
  /** Throws SecretError when the text was sealed by another key or context, or was altered. */
  open(sealed: string, context: string): string;
  /**
   * A 32-byte key for one purpose (e.g. signing storage URLs), derived from this key (HKDF-SHA256):
   * every process sharing the secrets key agrees on it, and it reveals nothing of the key itself.
   */
  derive(purpose: string): Buffer;
};

export class SecretError extends Error {}

/** A 32-byte key written as 64 hex characters or as base64 (standard or url-safe); null if not one. */
export function parseSecretsKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === 32) return key;
  }
  return null;
}

export const SECRETS_KEY_HINT =
  'must be 32 random bytes as 64 hex characters or base64, e.g. the output of `openssl rand -base64 32`';

const keyIdOf = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

export function secretsWithKey(key: Buffer): Secrets {
  if (key.length !== 32) throw new SecretError('a secrets key is 32 bytes');
  const keyId = keyIdOf(key);
  return {
    keyId,
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const sealed = Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url');
      return `v1:${keyId}:${sealed}`;
    },
    derive(purpose) {
      return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `svc:${purpose}`, 32));
    },
    open(sealed, context) {
      const [version, id, body, ...rest] = sealed.split(':');
      if (version !== 'v1' || !id || body === undefined || rest.length)
        throw new SecretError('not a sealed secret of a known format');
      if (id !== keyId)
        throw new SecretError(
          `sealed with key ${id}, but this service has key ${keyId} (is SECRETS_KEY the one every process shares?)`,
        );
      const raw = Buffer.from(body, 'base64url');
      if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretError('sealed secret is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([
          decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new SecretError('sealed secret does not open: altered, or sealed for another record');
      }
    },
  };
}

/**
 * The service's secrets key: the configured one, else DATA_DIR/secrets.key, generated on first
 * start (several processes starting at once agree on the first one written). Several hosts
 * sharing one PostgreSQL must share SECRETS_KEY, as they share JWT_PRIVATE_KEY.
 */
export function loadSecrets(dataDir: string, configuredKey?: Buffer): Secrets {
  if (configuredKey) return secretsWithKey(configuredKey);
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, SECRETS_KEY_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (text === undefined) {
    publishFile(file, `${randomBytes(32).toString('base64')}\n`, false);
    text = readFileSync(file, 'utf8'); // ours, or the one another process published first
  }
  const key = parseSecretsKey(text);
  if (!key) throw new SecretError(`${file}: ${SECRETS_KEY_HINT}`);
  return secretsWithKey(key);
}

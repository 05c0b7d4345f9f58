import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type JWK,
  SignJWT,
} from 'jose';
import { publishFile } from '../platform/publish-file.ts';

export type SigningKeys = {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** Long-lived JWTs of the same key with roles anon and service_role. */
  anonKey: string;
  serviceRoleKey: string;
};

type Stored = { kid: string; private_jwk?: JWK; anon_key: string; service_role_key: string };

const TEN_YEARS = 10 * 365 * 24 * 3600;

async function apiKey(privateKey: CryptoKey, kid: string, role: 'anon' | 'service_role') {
  const iat = Math.floor(Date.now() / 1000);
  return new SignJWT({ role })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
    .setIssuer('svc')
    .setIssuedAt(iat)
    .setExpirationTime(iat + TEN_YEARS)
    .sign(privateKey);
}

async function fromConfig(text: string): Promise<CryptoKey> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{'))
    return (await importJWK(JSON.parse(trimmed), 'ES256', { extractable: true })) as CryptoKey;
  return importPKCS8(trimmed, 'ES256', { extractable: true });
}

/**
 * The ES256 signing key and the anon/service-role keys. Generated on first start and kept in
 * DATA_DIR/keys.json (mode 0600), or taken from JWT_PRIVATE_KEY when several hosts must share it.
 */
export async function loadSigningKeys(dataDir: string, configuredKey?: string): Promise<SigningKeys> {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, configuredKey ? 'api-keys.json' : 'keys.json');

  let privateKey: CryptoKey;
  let stored: Stored | undefined;
  try {
    stored = JSON.parse(readFileSync(file, 'utf8')) as Stored;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }

  if (configuredKey) privateKey = await fromConfig(configuredKey);
  else if (stored?.private_jwk)
    privateKey = (await importJWK(stored.private_jwk, 'ES256', { extractable: true })) as CryptoKey;
  else privateKey = (await generateKeyPair('ES256', { extractable: true })).privateKey;

  const { d: _private, ...pub } = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(pub);
  const publicJwk: JWK = { ...pub, kid, alg: 'ES256', use: 'sig' };

  if (!stored || stored.kid !== kid) {
    const fresh: Stored = {
      kid,
      ...(configuredKey ? {} : { private_jwk: await exportJWK(privateKey) }),
      anon_key: await apiKey(privateKey, kid, 'anon'),
      service_role_key: await apiKey(privateKey, kid, 'service_role'),
    };
    if (!publishFile(file, JSON.stringify(fresh, null, 2), Boolean(stored))) {
      // Another process won the race: use what it wrote.
      return loadSigningKeys(dataDir, configuredKey);
    }
    stored = fresh;
  }
  return { kid, privateKey, publicJwk, anonKey: stored.anon_key, serviceRoleKey: stored.service_role_key };
}

/** The `kid` a configured JWT_PRIVATE_KEY signs with (to tell whether a backup's tokens verify). */
export async function configuredKeyId(configuredKey: string): Promise<string> {
  const { d: _private, ...pub } = await exportJWK(await fromConfig(configuredKey));
  return calculateJwkThumbprint(pub);
}

// What a backup file holds, by name (docs/operations.md, "Backups"):
//   database.tar              the embedded database's data directory, as PGlite dumps it
//   keys/keys.json            the signing key and the anon/service-role keys (absent with JWT_PRIVATE_KEY)
//   keys/api-keys.json        the anon/service-role keys of a configured JWT_PRIVATE_KEY
//   keys/secrets.key          the key that seals connected accounts' tokens (absent with SECRETS_KEY)
//   storage/objects/<bucket>/<path>, storage/meta/<bucket>/<path>.json   the bucket on disk
//   svc-backup.json           the manifest, last: format, keys' ids, every entry's size and SHA-256
// Restore takes these names only, so an entry can never land outside the folders it belongs in.

export const FORMAT = 'svc-backup';
export const VERSION = 1;
export const MANIFEST = 'svc-backup.json';
export const DATABASE = 'database.tar';
export const KEY_FILES = ['keys.json', 'api-keys.json', 'secrets.key'] as const;
export const STORAGE_PARTS = ['objects', 'meta'] as const;

export type Manifest = {
  format: typeof FORMAT;
  version: number;
  created_at: string;
  engine: 'pglite';
  /** The signing key's id (JWKS `kid`), and whether the backup holds the key or it was configured. */
  signing_key: { kid: string; in_backup: boolean };
  /** The secrets key's id (the one sealed values name), and whether the backup holds it. */
  secrets_key: { id: string; in_backup: boolean };
  entries: { name: string; size: number; sha256: string }[];
};

export type Place =
  | { kind: 'database' }
  | { kind: 'manifest' }
  | { kind: 'key'; file: (typeof KEY_FILES)[number] }
  | { kind: 'storage'; relative: string };

const safeSegment = (s: string) => s !== '' && s !== '.' && s !== '..' && !/[\\\0]/.test(s);

/** Where an entry of a backup belongs, or null for a name no backup has. */
export function placeOf(name: string): Place | null {
  if (name === DATABASE) return { kind: 'database' };
  if (name === MANIFEST) return { kind: 'manifest' };
  const [top, second, ...rest] = name.split('/');
  if (top === 'keys' && rest.length === 0 && KEY_FILES.includes(second as (typeof KEY_FILES)[number]))
    return { kind: 'key', file: second as (typeof KEY_FILES)[number] };
  if (
    top === 'storage' &&
    STORAGE_PARTS.includes(second as (typeof STORAGE_PARTS)[number]) &&
    rest.length > 0 &&
    rest.every(safeSegment)
  )
    return { kind: 'storage', relative: [second, ...rest].join('/') };
  return null;
}

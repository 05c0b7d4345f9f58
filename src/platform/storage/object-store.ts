// Where the files of /storage/v1 live (docs/storage.md): one small interface, one adapter per
// backend (disk-store.ts; an S3-compatible store is the next one). Keys are `<bucket>/<path>`,
// `/`-separated, never starting with `/` and never holding `.` or `..` segments or NUL
// (objectKey() checks them). The store knows nothing of tenants: callers put the organization's
// id first in the path and decide who may ask for what.

export type ObjectInfo = { contentType: string; size: number; updatedAt: Date };
export type StoredObject = ObjectInfo & { bytes: Uint8Array };

/**
 * One entry under a folder: a file, or a sub-folder whose `name` ends with `/` (size 0, no
 * content type), as an S3 listing with a delimiter gives them (CommonPrefixes).
 */
export type ListedObject = { name: string; size: number; contentType: string; updatedAt: Date };

export interface ObjectStore {
  /** Stores the whole object or nothing (readers never see it half-written); replaces any old one. */
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  get(key: string): Promise<StoredObject | null>;
  /** What `get` says of an object, without its bytes (signing a URL must not read a video). */
  head(key: string): Promise<ObjectInfo | null>;
  /** Removes what exists of `keys`; returns the keys it removed. */
  remove(keys: string[]): Promise<string[]>;
  /**
   * The entries directly under the folder `prefix` (a key prefix without the trailing `/`), by
   * name; `search` keeps those whose name starts with it (case-insensitive), as Supabase's does.
   */
  list(prefix: string, opts: { limit: number; offset: number; search?: string }): Promise<ListedObject[]>;
}

export class InvalidKeyError extends Error {}

/** The key checked: relative, `/`-separated, no empty, `.` or `..` segment, no control character or backslash. */
export function objectKey(key: string): string {
  const segments = key.split('/');
  if (
    key.length === 0 ||
    key.length > 1024 ||
    [...key].some((ch) => ch < ' ' || ch === '\x7f' || ch === '\\') ||
    segments.some((s) => s === '' || s === '.' || s === '..')
  )
    throw new InvalidKeyError(`invalid object key: ${JSON.stringify(key)}`);
  return key;
}

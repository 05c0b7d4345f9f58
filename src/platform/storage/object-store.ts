import type { Readable } from 'node:stream';

// Where the files of /storage/v1 live (docs/storage.md): one small interface, one adapter per
// backend (disk-store.ts, s3-store.ts; open-store.ts picks one). Objects pass through as streams,
// never whole in memory: a 1 GB video costs the process a few buffers, not 1 GB. Keys are `<bucket>/<path>`,
// `/`-separated, never starting with `/` and never holding `.` or `..` segments or NUL
// (objectKey() checks them). The store knows nothing of tenants: callers put the organization's
// id first in the path and decide who may ask for what.

export type ObjectInfo = { contentType: string; size: number; updatedAt: Date };
/** An object read: its bytes as a stream, which the caller reads to its end or destroys. */
export type StoredObject = ObjectInfo & { body: Readable };
/** What `put` takes: a stream (checked on its way, media-stream.ts), or bytes at hand. */
export type ObjectBody = Readable | Uint8Array;

/**
 * One entry under a folder: a file, or a sub-folder whose `name` ends with `/` (size 0, no
 * content type), as an S3 listing with a delimiter gives them (CommonPrefixes).
 */
export type ListedObject = { name: string; size: number; contentType: string; updatedAt: Date };

export interface ObjectStore {
  /**
   * Stores the whole object or nothing, and replaces any old one: readers never see it
   * half-written, and a body that fails (too large, cut off) leaves no object and no part of one
   * (the old one, if any, stays). Rejects with the body's own error then. Resolves to the size.
   */
  put(key: string, body: ObjectBody, contentType: string): Promise<number>;
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

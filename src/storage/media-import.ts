import { randomUUID } from 'node:crypto';
import { validationError } from '../platform/errors.ts';
import {
  type FetchedMedia,
  fetchMedia,
  MediaFetchError,
  type MediaFetchOptions,
} from '../platform/media-fetch.ts';
import { MAX_MEDIA_BYTES } from '../platform/media-type.ts';
import type { ObjectStore } from '../platform/storage/object-store.ts';
import { SOCIAL_MEDIA_BUCKET } from './bucket.ts';
import { ownObjectPath, readOwnObject } from './own-object.ts';

// A post's media_urls, downloaded (media-fetch.ts) into the organization's folder of the
// social-media bucket, in the order given: everything or nothing. One refused or failed URL
// removes the files already stored and fails with a validation_error naming the URL and why, so
// the write that asked for them can fail whole. Downloads run one at a time: a video may be 1 GB,
// and only one is held in memory at once. The caller inserts the rows (social_post_media) and,
// should that fail, calls discardMedia with what this returned.

export type ImportedMedia = {
  /** 0-based, the order of media_urls. */
  position: number;
  sourceUrl: string;
  /** The object's path inside the bucket: `<organization id>/posts/<uuid>.<ext>`. */
  path: string;
  /** The store's key: `social-media/<path>`. */
  key: string;
  mimeType: string;
  kind: FetchedMedia['kind'];
  size: number;
  width?: number;
  height?: number;
};

export type MediaImportDeps = {
  storage: ObjectStore;
  /** The service's own address: object URLs on it are read from the store (own-object.ts). */
  publicUrl?: string;
  fetch?: typeof fetchMedia;
  options: Omit<MediaFetchOptions, 'maxBytes'> & { maxBytes?: number };
};

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
};

export async function importMediaUrls(
  deps: MediaImportDeps,
  organizationId: string,
  urls: string[],
): Promise<ImportedMedia[]> {
  const download = deps.fetch ?? fetchMedia;
  const stored: ImportedMedia[] = [];
  for (const [position, url] of urls.entries()) {
    try {
      const own = ownObjectPath(url, deps.publicUrl);
      const media = own
        ? await readOwnObject(deps.storage, organizationId, url, own)
        : await download(url, { maxBytes: MAX_MEDIA_BYTES, ...deps.options });
      const path = `${organizationId}/posts/${randomUUID()}.${EXTENSIONS[media.mimeType] ?? 'bin'}`;
      const key = `${SOCIAL_MEDIA_BUCKET}/${path}`;
      await deps.storage.put(key, media.bytes, media.mimeType);
      stored.push({
        position,
        sourceUrl: url,
        path,
        key,
        mimeType: media.mimeType,
        kind: media.kind,
        size: media.bytes.length,
        ...(media.width !== undefined ? { width: media.width, height: media.height } : {}),
      });
    } catch (err) {
      await discardMedia(deps.storage, stored);
      if (!(err instanceof MediaFetchError)) throw err;
      throw validationError(
        [{ path: `media_urls.${position}`, message: `${url}: ${err.reason}` }],
        `media_urls[${position}] could not be used: ${err.reason}`,
      );
    }
  }
  return stored;
}

/** Removes imported files whose post was not written after all. */
export async function discardMedia(storage: ObjectStore, media: Pick<ImportedMedia, 'key'>[]): Promise<void> {
  if (media.length) await storage.remove(media.map((m) => m.key));
}

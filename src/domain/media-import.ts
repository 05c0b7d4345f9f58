import { randomUUID } from 'node:crypto';
import { validationError } from '../platform/errors.ts';
import {
  type MediaDownload,
  MediaFetchError,
  type MediaFetchOptions,
  openMedia,
} from '../platform/media-fetch.ts';
import { MAX_MEDIA_BYTES } from '../platform/media-type.ts';
import type { ObjectStore } from '../platform/storage/object-store.ts';
import { SOCIAL_MEDIA_BUCKET } from './media-bucket.ts';
import { ownObjectPath, readOwnObject } from './own-object.ts';

// A post's media_urls, downloaded (media-fetch.ts) into the organization's folder of the
// social-media bucket: everything or nothing. One refused or failed URL cancels the downloads still
// running, removes the files already stored and fails with a validation_error naming the URL and
// why, so the write that asked for them can fail whole. Each file streams from its URL into the
// store (a video of 1 GB costs the process a few buffers, not 1 GB; on S3 about three 8 MiB parts,
// src/platform/storage/s3-store.ts). They run side by side, at most `concurrency` at once, under one deadline
// for all of them (`options.timeoutMs`): ten slow URLs cost one deadline, not ten. The caller
// inserts the rows (social_post_media) and, should that fail, calls discardMedia with what this
// returned.

export type ImportedMedia = {
  /** 0-based, the order of media_urls. */
  position: number;
  sourceUrl: string;
  /** The object's path inside the bucket: `<organization id>/posts/<uuid>.<ext>`. */
  path: string;
  /** The store's key: `social-media/<path>`. */
  key: string;
  mimeType: string;
  kind: MediaDownload['kind'];
  size: number;
  width?: number;
  height?: number;
};

export type MediaImportDeps = {
  storage: ObjectStore;
  /** The service's own address: object URLs on it are read from the store (own-object.ts). */
  publicUrl?: string;
  open?: typeof openMedia;
  /** `timeoutMs` is the deadline of the whole import. */
  options: Omit<MediaFetchOptions, 'maxBytes' | 'signal'> & { maxBytes?: number };
  /** Downloads at once (MEDIA_FETCH_CONCURRENCY); 1 by default. */
  concurrency?: number;
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
  const cancel = new AbortController();
  const deadline = AbortSignal.timeout(deps.options.timeoutMs);
  const signal = AbortSignal.any([cancel.signal, deadline]);
  const stored: ImportedMedia[] = [];
  let failure: { position: number; url: string; err: unknown } | undefined;
  let next = 0;
  // Each lane takes the next URL until none is left or one has failed; a file stored after a
  // failure is still recorded, so that it is removed with the others.
  const lane = async () => {
    while (!failure && next < urls.length) {
      const position = next++;
      const url = urls[position] as string;
      try {
        stored.push(await importOne(deps, organizationId, url, position, signal));
      } catch (err) {
        if (failure) continue; // cancelled by the first failure: that one is the answer
        failure = { position, url, err };
        cancel.abort();
      }
    }
  };
  const lanes = Math.max(1, Math.min(deps.concurrency ?? 1, urls.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  if (!failure) return stored.sort((a, b) => a.position - b.position);
  await discardMedia(deps.storage, stored);
  const { position, url, err } = failure;
  if (!(err instanceof MediaFetchError)) throw err;
  const reason = deadline.aborted
    ? `not fetched within ${deps.options.timeoutMs} ms, the time allowed for all of a post’s media`
    : err.reason;
  throw validationError(
    [{ path: `media_urls.${position}`, message: `${url}: ${reason}` }],
    `media_urls[${position}] could not be used: ${reason}`,
  );
}

async function importOne(
  deps: MediaImportDeps,
  organizationId: string,
  url: string,
  position: number,
  signal: AbortSignal,
): Promise<ImportedMedia> {
  const own = ownObjectPath(url, deps.publicUrl);
  const media = own
    ? await readOwnObject(deps.storage, organizationId, url, own)
    : await (deps.open ?? openMedia)(url, { maxBytes: MAX_MEDIA_BYTES, ...deps.options, signal });
  // A file opened after the import was given up is not stored: the failure's answer is on its way.
  if (signal.aborted) {
    media.stream.destroy();
    throw new MediaFetchError(url, 'cancelled');
  }
  // Cancelled while it is stored: the store sees the stream fail and keeps nothing. The error is
  // the store's to handle; heard here too, so one emitted after the store stopped listening never
  // reaches the process as an uncaught exception.
  media.stream.on('error', () => {});
  const stop = () => media.stream.destroy(new MediaFetchError(url, 'cancelled'));
  signal.addEventListener('abort', stop, { once: true });
  const path = `${organizationId}/posts/${randomUUID()}.${EXTENSIONS[media.mimeType] ?? 'bin'}`;
  const key = `${SOCIAL_MEDIA_BUCKET}/${path}`;
  try {
    // The store keeps nothing of a stream that fails (too large, cut off, cancelled).
    await deps.storage.put(key, media.stream, media.mimeType);
  } catch (err) {
    throw media.failure() ?? err;
  } finally {
    signal.removeEventListener('abort', stop);
  }
  const { size, width, height } = media.measured();
  return {
    position,
    sourceUrl: url,
    path,
    key,
    mimeType: media.mimeType,
    kind: media.kind,
    size,
    ...(width !== undefined && height !== undefined ? { width, height } : {}),
  };
}

/** Removes imported files whose post was not written after all. */
export async function discardMedia(storage: ObjectStore, media: Pick<ImportedMedia, 'key'>[]): Promise<void> {
  if (media.length) await storage.remove(media.map((m) => m.key));
}

import { randomUUID } from 'node:crypto';
import { validationError } from '../platform/errors.ts';
import { MEDIA_CONSTRAINTS } from './social.ts';

// A post's media (issue 14, docs/social.md): the URLs a caller gives are downloaded by the service
// (safely: src/platform/media-fetch.ts decides what may be fetched and what a file is, by its
// bytes) into the bucket `social-media`, under the organization's own folder, in the order given.
// One refused URL refuses them all, and the files already stored are removed again.

export const MEDIA_BUCKET = 'social-media';

export type FetchedMedia = {
  bytes: Uint8Array;
  mimeType: string;
  kind: 'image' | 'video';
  width?: number;
  height?: number;
};

export type MediaDeps = {
  fetchMedia: (url: string) => Promise<FetchedMedia>;
  storage: {
    put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
    remove(keys: string[]): Promise<string[]>;
  };
};

export type StoredMedia = {
  storage_path: string;
  mime_type: string;
  bytes: number;
  width?: number | undefined;
  height?: number | undefined;
  source_url: string;
};

const EXTENSION: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'video/mp4': 'mp4',
  'video/quicktime': 'mov',
};

/** The reason a download failed, as the caller should read it (never a stack or an address). */
const reasonOf = (err: unknown) =>
  (err as { reason?: string }).reason ?? (err instanceof Error ? err.message : 'the download failed');

export async function storeMedia(
  deps: MediaDeps,
  organizationId: string,
  urls: string[],
): Promise<StoredMedia[]> {
  const stored: StoredMedia[] = [];
  try {
    for (const [i, url] of urls.entries()) {
      let media: FetchedMedia;
      try {
        media = await deps.fetchMedia(url);
      } catch (err) {
        throw validationError(
          [{ path: `media_urls.${i}`, message: `${url}: ${reasonOf(err)}` }],
          `The media at ${url} cannot be used: ${reasonOf(err)}`,
        );
      }
      const limit = MEDIA_CONSTRAINTS.types[media.kind];
      if (
        !(limit.mime_types as readonly string[]).includes(media.mimeType) ||
        media.bytes.length > limit.max_bytes
      )
        throw validationError([
          { path: `media_urls.${i}`, message: `${url}: not an accepted ${media.kind}` },
        ]);
      const path = `${organizationId}/posts/${randomUUID()}.${EXTENSION[media.mimeType] ?? 'bin'}`;
      await deps.storage.put(`${MEDIA_BUCKET}/${path}`, media.bytes, media.mimeType);
      stored.push({
        storage_path: path,
        mime_type: media.mimeType,
        bytes: media.bytes.length,
        width: media.width,
        height: media.height,
        source_url: url,
      });
    }
    return stored;
  } catch (err) {
    await removeStored(deps, stored);
    throw err;
  }
}

export async function removeStored(
  deps: MediaDeps,
  media: Pick<StoredMedia, 'storage_path'>[],
): Promise<void> {
  if (media.length) await deps.storage.remove(media.map((m) => `${MEDIA_BUCKET}/${m.storage_path}`));
}

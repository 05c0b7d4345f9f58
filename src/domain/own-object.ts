import { type MediaDownload, MediaFetchError } from '../platform/media-fetch.ts';
import { checkMediaStream } from '../platform/media-stream.ts';
import { InvalidKeyError, type ObjectStore, objectKey } from '../platform/storage/object-store.ts';
import { SOCIAL_MEDIA_BUCKET } from './media-bucket.ts';

// A media URL of this service's own bucket names a file already here, uploaded with storage-js
// (as the dashboard does): it is read from the store, not downloaded. The service's own address
// is loopback or private on most setups, where a download is refused (media-fetch.ts), and there
// is no reason to go out over HTTP for bytes in the same store. The object streams from the store
// and back into it, checked on the way as a download is.

const OBJECT_PATH = new RegExp(
  `^/storage/v1/object/(?:sign/|public/|authenticated/)?${SOCIAL_MEDIA_BUCKET}/(.+)$`,
);

/** The bucket path `url` names when it is an object URL on `publicUrl`'s origin; else null. */
export function ownObjectPath(url: string, publicUrl: string | undefined): string | null {
  if (!publicUrl) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.origin !== new URL(publicUrl).origin) return null;
  const match = OBJECT_PATH.exec(parsed.pathname);
  if (!match?.[1]) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

/**
 * The object at `path`, checked as a download is (type by its bytes, the type's size limit).
 * Only the organization's own folder can be named: another's file is "no such file", as a
 * missing one, so nobody learns what exists elsewhere. Signed or not, the URL grants nothing more.
 */
export async function readOwnObject(
  storage: ObjectStore,
  organizationId: string,
  url: string,
  path: string,
): Promise<MediaDownload> {
  const object = path.startsWith(`${organizationId}/`)
    ? await storage.get(ownKey(url, `${SOCIAL_MEDIA_BUCKET}/${path}`))
    : null;
  if (!object)
    throw new MediaFetchError(url, 'no such file in your organization’s folder of the social-media bucket');
  const tooLarge = (limit: number, kind?: string) =>
    new MediaFetchError(url, `larger than ${limit} bytes, the limit${kind ? ` for ${kind}s` : ''}`);
  const media = await checkMediaStream(object.body, {
    unsupported: () =>
      new MediaFetchError(
        url,
        'the content is not a JPEG, PNG, GIF or WebP image, nor an MP4 or QuickTime video (judged by its bytes)',
      ),
    tooLarge,
    failed: (err) => new MediaFetchError(url, `the file could not be read (${(err as Error).message})`),
  });
  // Its size is known before a byte is copied: a file over its type's limit is refused at once.
  if (object.size > media.limit) {
    media.stream.destroy();
    throw tooLarge(media.limit, media.kind);
  }
  return { ...media, finalUrl: url };
}

/**
 * The store's key, or a refusal naming the URL: a path with `..`, empty segments, backslashes or
 * control characters (`..%2f`, `%00`, `//`, `%5c`) names no object anywhere, and is the caller's
 * mistake to hear about (400), not a fault of the service.
 */
function ownKey(url: string, key: string): string {
  try {
    return objectKey(key);
  } catch (err) {
    if (!(err instanceof InvalidKeyError)) throw err;
    throw new MediaFetchError(
      url,
      'not a valid file path in the social-media bucket (no empty, "." or ".." segments, backslashes or control characters)',
    );
  }
}

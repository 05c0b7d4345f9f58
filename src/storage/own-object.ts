import { type FetchedMedia, MediaFetchError } from '../platform/media-fetch.ts';
import { imageSize, maxBytesOf, SNIFF_BYTES, sniffMedia } from '../platform/media-type.ts';
import { InvalidKeyError, type ObjectStore, objectKey } from '../platform/storage/object-store.ts';
import { SOCIAL_MEDIA_BUCKET } from './bucket.ts';

// A media URL of this service's own bucket names a file already here, uploaded with storage-js
// (as the dashboard does): it is read from the store, not downloaded. The service's own address
// is loopback or private on most setups, where a download is refused (media-fetch.ts), and there
// is no reason to go out over HTTP for bytes on the same disk.

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
): Promise<FetchedMedia> {
  const object = path.startsWith(`${organizationId}/`)
    ? await storage.get(ownKey(url, `${SOCIAL_MEDIA_BUCKET}/${path}`))
    : null;
  if (!object)
    throw new MediaFetchError(url, 'no such file in your organization’s folder of the social-media bucket');
  const type = sniffMedia(object.bytes.subarray(0, SNIFF_BYTES)) ?? sniffMedia(object.bytes);
  if (!type) {
    throw new MediaFetchError(
      url,
      'the content is not a JPEG, PNG, GIF or WebP image, nor an MP4 or QuickTime video (judged by its bytes)',
    );
  }
  const limit = maxBytesOf(type.kind);
  if (object.bytes.length > limit)
    throw new MediaFetchError(url, `larger than ${limit} bytes, the limit for ${type.kind}s`);
  return {
    bytes: object.bytes,
    mimeType: type.mimeType,
    kind: type.kind,
    finalUrl: url,
    ...(type.kind === 'image' ? imageSize(object.bytes, type.mimeType) : undefined),
  };
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

// What a media file is, decided by its first bytes (magic numbers) and never by its name or the
// Content-Type someone claimed: a PNG named photo.jpg is a PNG, and an HTML page named cat.gif is
// refused. Used by the media download (media-fetch.ts) and by uploads to /storage/v1.

/**
 * The media this service takes, by kind: the types `sniffMedia` recognises and the largest file of
 * each. The social rules publish them as MEDIA_CONSTRAINTS.types (src/domain/social.ts).
 */
export const MEDIA_KINDS = {
  image: {
    mime_types: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'],
    max_bytes: 10 * 1024 * 1024,
  },
  video: { mime_types: ['video/mp4', 'video/quicktime'], max_bytes: 1024 * 1024 * 1024 },
};

export type MediaKind = keyof typeof MEDIA_KINDS;
export type MediaType = { mimeType: string; kind: MediaKind };

/** How many leading bytes `sniffMedia` needs to decide. */
export const SNIFF_BYTES = 16;

const ascii = (b: Uint8Array, at: number, text: string) =>
  b.length >= at + text.length && [...text].every((ch, i) => b[at + i] === ch.charCodeAt(0));

// ISO base-media brands that are not video: HEIF/AVIF stills, audio-only MPEG-4, Canon raw.
const NOT_VIDEO_BRANDS = new Set([
  'heic',
  'heix',
  'hevc',
  'heim',
  'heis',
  'hevm',
  'hevs',
  'mif1',
  'msf1',
  'avif',
  'avis',
  'M4A ',
  'M4B ',
  'M4P ',
  'crx ',
]);

/** The type of a file from its first SNIFF_BYTES bytes; null when it is none of MEDIA_KINDS'. */
export function sniffMedia(head: Uint8Array): MediaType | null {
  const b = head;
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return { mimeType: 'image/jpeg', kind: 'image' };
  if (b[0] === 0x89 && ascii(b, 1, 'PNG\r\n\x1a\n')) return { mimeType: 'image/png', kind: 'image' };
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return { mimeType: 'image/gif', kind: 'image' };
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return { mimeType: 'image/webp', kind: 'image' };
  if (ascii(b, 4, 'ftyp') && b.length >= 12) {
    const brand = String.fromCharCode(...b.subarray(8, 12));
    if (brand === 'qt  ') return { mimeType: 'video/quicktime', kind: 'video' };
    if (!NOT_VIDEO_BRANDS.has(brand)) return { mimeType: 'video/mp4', kind: 'video' };
  }
  return null;
}

/** The largest file of a kind MEDIA_KINDS allows. */
export const maxBytesOf = (kind: MediaKind): number => MEDIA_KINDS[kind].max_bytes;

/** The largest media file of any kind: the ceiling of an upload before its type is known. */
export const MAX_MEDIA_BYTES = Math.max(...Object.values(MEDIA_KINDS).map((t) => t.max_bytes));

const u16be = (b: Uint8Array, at: number) => ((b[at] ?? 0) << 8) | (b[at + 1] ?? 0);
const u16le = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
const u24le = (b: Uint8Array, at: number) => u16le(b, at) | ((b[at + 2] ?? 0) << 16);
const u32be = (b: Uint8Array, at: number) => ((u16be(b, at) << 16) >>> 0) + u16be(b, at + 2);

/**
 * Width and height of an image from its header (the publisher and the dashboard show them);
 * undefined when the header does not say (videos, truncated or unusual files).
 */
export function imageSize(b: Uint8Array, mimeType: string): { width: number; height: number } | undefined {
  const size = (width: number, height: number) => (width > 0 && height > 0 ? { width, height } : undefined);
  switch (mimeType) {
    case 'image/png':
      return ascii(b, 12, 'IHDR') ? size(u32be(b, 16), u32be(b, 20)) : undefined;
    case 'image/gif':
      return b.length >= 10 ? size(u16le(b, 6), u16le(b, 8)) : undefined;
    case 'image/webp':
      if (ascii(b, 12, 'VP8 ') && b.length >= 30) return size(u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff);
      if (ascii(b, 12, 'VP8L') && b.length >= 25) {
        const bits = (b[21] ?? 0) | ((b[22] ?? 0) << 8) | ((b[23] ?? 0) << 16) | ((b[24] ?? 0) << 24);
        return size((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
      }
      if (ascii(b, 12, 'VP8X') && b.length >= 30) return size(u24le(b, 24) + 1, u24le(b, 27) + 1);
      return undefined;
    case 'image/jpeg':
      return jpegSize(b);
    default:
      return undefined;
  }
}

// The size is in the first start-of-frame segment (SOF0–SOF15 but DHT C4, JPG C8 and DAC CC),
// found by walking the segments' lengths from the start.
function jpegSize(b: Uint8Array): { width: number; height: number } | undefined {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return undefined;
    const marker = b[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2; // markers without a length
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const height = u16be(b, at + 5);
      const width = u16be(b, at + 7);
      return width > 0 && height > 0 ? { width, height } : undefined;
    }
    at += 2 + u16be(b, at + 2);
  }
  return undefined;
}

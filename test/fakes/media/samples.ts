// The smallest files each media type is recognised by (headers as the formats define them, then
// padding), with known dimensions, for the media download and upload tests.

const pad = (head: number[], size: number) => {
  const b = new Uint8Array(size);
  b.set(head);
  return b;
};
const text = (s: string) => [...s].map((c) => c.charCodeAt(0));
const u16be = (n: number) => [n >> 8, n & 0xff];
const u16le = (n: number) => [n & 0xff, n >> 8];
const u24le = (n: number) => [n & 0xff, (n >> 8) & 0xff, n >> 16];
const u32le = (n: number) => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24];
const u32be = (n: number) => [n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];

export const png = (width = 640, height = 480, size = 2048) =>
  pad(
    [
      0x89,
      ...text('PNG\r\n\x1a\n'),
      0,
      0,
      0,
      13,
      ...text('IHDR'),
      ...u32be(width),
      ...u32be(height),
      8,
      6,
      0,
      0,
      0,
    ],
    size,
  );

export const jpeg = (width = 800, height = 600, size = 2048) =>
  pad(
    [
      0xff,
      0xd8,
      0xff,
      0xe0,
      ...u16be(16),
      ...text('JFIF\0'),
      1,
      1,
      0,
      0,
      1,
      0,
      1,
      0,
      0,
      0xff,
      0xc0,
      ...u16be(17),
      8,
      ...u16be(height),
      ...u16be(width),
      3,
    ],
    size,
  );

export const gif = (width = 320, height = 200, size = 1024) =>
  pad([...text('GIF89a'), ...u16le(width), ...u16le(height), 0, 0, 0], size);

export const webp = (width = 1024, height = 768, size = 1024) =>
  pad(
    [
      ...text('RIFF'),
      ...u32le(size - 8),
      ...text('WEBPVP8X'),
      10,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      ...u24le(width - 1),
      ...u24le(height - 1),
    ],
    size,
  );

export const mp4 = (size = 4096) =>
  pad(
    [0, 0, 0, 0x18, ...text('ftypisom'), 0, 0, 2, 0, ...text('isommp42'), 0, 0, 0, 8, ...text('mdat')],
    size,
  );

export const quicktime = (size = 4096) =>
  pad([0, 0, 0, 0x14, ...text('ftypqt  '), 0, 0, 2, 0, ...text('qt  ')], size);

export const html = () => new TextEncoder().encode('<!doctype html><html><body>not media</body></html>');

import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchMedia, MediaFetchError } from '../../src/platform/media-fetch.ts';
import { gif, html, jpeg, mp4, png, quicktime, webp } from '../fakes/media/samples.ts';

// What the media download protects: only the types MEDIA_CONSTRAINTS names, told by their bytes;
// no private address reached, directly, through DNS or through a redirect; downloads cut off as
// soon as they pass their limit; and an answer (a refusal) within the deadline, whatever the
// server does. A real HTTP server on 127.0.0.1 plays the media host.

const FILES: Record<string, Uint8Array> = {
  '/a.png': png(640, 480),
  '/a.jpeg': jpeg(800, 600),
  '/a.gif': gif(320, 200),
  '/a.webp': webp(1024, 768),
  '/a.mp4': mp4(),
  '/a.mov': quicktime(),
  '/photo.jpg': png(12, 34),
  '/page.gif': html(),
};

let server: Server;
let origin: string;
let port: number;
/** Bytes the /big route managed to write before the client hung up. */
let bigWritten = 0;
let bigClosedEarly = false;
const BIG_TOTAL = 20 * 1024 * 1024;

function streamBig(res: ServerResponse) {
  bigWritten = 0;
  bigClosedEarly = false;
  res.writeHead(200, { 'content-type': 'image/png' }); // chunked: no Content-Length to refuse on
  const chunk = Buffer.alloc(16 * 1024);
  Buffer.from(png()).copy(chunk, 0, 0, 64);
  let stopped = false;
  res.on('close', () => {
    stopped = true;
    if (bigWritten < BIG_TOTAL) bigClosedEarly = true;
  });
  const tick = () => {
    if (stopped) return;
    if (bigWritten >= BIG_TOTAL) return void res.end();
    res.write(bigWritten === 0 ? chunk : Buffer.alloc(chunk.length));
    bigWritten += chunk.length;
    setTimeout(tick, 1);
  };
  tick();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    const file = FILES[url];
    if (file) {
      res.writeHead(200, { 'content-type': url === '/photo.jpg' ? 'image/jpeg' : 'image/gif' });
      return void res.end(file);
    }
    const chain = /^\/chain\/(\d+)$/.exec(url);
    if (chain) {
      const n = Number(chain[1]);
      res.writeHead(302, { location: n === 0 ? '/a.png' : `/chain/${n - 1}` });
      return void res.end();
    }
    if (url === '/to-loopback') {
      // Another port of 127.0.0.1, which the allow list (this port only) does not cover.
      res.writeHead(302, { location: `https://127.0.0.1:${port + 1}/a.png` });
      return void res.end();
    }
    if (url === '/to-localhost') {
      res.writeHead(301, { location: `https://localhost:${port}/a.png` });
      return void res.end();
    }
    if (url === '/to-metadata') {
      res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' });
      return void res.end();
    }
    if (url === '/big') return streamBig(res);
    if (url === '/big-declared') {
      res.writeHead(200, { 'content-length': String(50 * 1024 * 1024) });
      return void res.write(png());
    }
    if (url === '/hang') return; // never answers
    if (url === '/stall') {
      res.writeHead(200);
      return void res.write(png().subarray(0, 100)); // headers, a few bytes, then nothing
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const opts = (over: Partial<Parameters<typeof fetchMedia>[1]> = {}) => ({
  allowHosts: [`127.0.0.1:${port}`],
  timeoutMs: 5000,
  maxBytes: 2 * 1024 * 1024 * 1024,
  ...over,
});

/** The refusal's reason, failing the test when the download went through. */
async function refusal(url: string, o = opts()): Promise<string> {
  try {
    await fetchMedia(url, o);
  } catch (err) {
    expect(err).toBeInstanceOf(MediaFetchError);
    expect((err as MediaFetchError).url).toBe(url);
    return (err as MediaFetchError).reason;
  }
  throw new Error(`${url} was fetched`);
}

describe('fetchMedia', () => {
  it.each([
    ['/a.png', 'image/png', 'image', { width: 640, height: 480 }],
    ['/a.jpeg', 'image/jpeg', 'image', { width: 800, height: 600 }],
    ['/a.gif', 'image/gif', 'image', { width: 320, height: 200 }],
    ['/a.webp', 'image/webp', 'image', { width: 1024, height: 768 }],
    ['/a.mp4', 'video/mp4', 'video', {}],
    ['/a.mov', 'video/quicktime', 'video', {}],
  ])('downloads %s and tells its type (%s) and size from its bytes', async (path, mimeType, kind, size) => {
    const media = await fetchMedia(`${origin}${path}`, opts());
    expect(media).toMatchObject({ mimeType, kind, finalUrl: `${origin}${path}`, ...size });
    expect(Buffer.from(media.bytes).equals(Buffer.from(FILES[path] as Uint8Array))).toBe(true);
  });

  it('judges a PNG named photo.jpg and served as image/jpeg to be a PNG', async () => {
    const media = await fetchMedia(`${origin}/photo.jpg`, opts());
    expect(media).toMatchObject({ mimeType: 'image/png', kind: 'image', width: 12, height: 34 });
  });

  it('refuses content that is no supported media, whatever its name and Content-Type say', async () => {
    expect(await refusal(`${origin}/page.gif`)).toMatch(/not a JPEG, PNG, GIF or WebP image/);
  });

  it('stops reading a download as soon as it passes the limit', async () => {
    const reason = await refusal(`${origin}/big`, opts({ maxBytes: 64 * 1024 }));
    expect(reason).toMatch(/larger than 65536 bytes/);
    await expect.poll(() => bigClosedEarly).toBe(true);
    expect(bigWritten).toBeLessThan(BIG_TOTAL / 4);
  });

  it('refuses a file whose Content-Length is over the limit without reading it', async () => {
    expect(await refusal(`${origin}/big-declared`, opts({ maxBytes: 1024 * 1024 }))).toMatch(
      /larger than 1048576 bytes/,
    );
  });

  it('holds each type to its own limit (images 10 MB) below the overall cap', async () => {
    expect(await refusal(`${origin}/big`)).toMatch(/larger than 10485760 bytes, the limit for images/);
  });

  it('follows up to 5 redirects and refuses the 6th', async () => {
    const media = await fetchMedia(`${origin}/chain/4`, opts());
    expect(media.finalUrl).toBe(`${origin}/a.png`);
    expect(await refusal(`${origin}/chain/5`)).toMatch(/more than 5 redirects/);
  });

  it('refuses a redirect to 127.0.0.1 that the allow list does not cover', async () => {
    expect(await refusal(`${origin}/to-loopback`)).toMatch(
      /127\.0\.0\.1:\d+ is not a public internet address/,
    );
  });

  it('refuses a redirect to a name that resolves to a loopback address', async () => {
    expect(await refusal(`${origin}/to-localhost`)).toMatch(
      /localhost resolves to (127\.0\.0\.1|::1), not a public/,
    );
  });

  it('refuses a redirect to the cloud metadata address, plain http or not', async () => {
    expect(await refusal(`${origin}/to-metadata`)).toMatch(/only https URLs/);
    expect(await refusal('https://169.254.169.254/latest/meta-data/')).toMatch(
      /not a public internet address/,
    );
  });

  it('refuses plain http for a host that is not on the allow list', async () => {
    expect(await refusal(`${origin}/a.png`, opts({ allowHosts: [] }))).toMatch(/only https URLs/);
    expect(await refusal('http://example.com/a.png', opts({ allowHosts: [] }))).toMatch(/only https URLs/);
  });

  it('refuses a host name resolving to 127.0.0.1 when it is not on the allow list', async () => {
    expect(await refusal(`https://localhost:${port}/a.png`, opts({ allowHosts: [] }))).toMatch(
      /localhost resolves to (127\.0\.0\.1|::1), not a public internet address/,
    );
  });

  it.each([
    'https://10.0.0.1/a.png',
    'https://[::1]/a.png',
    'https://[::ffff:127.0.0.1]/a.png',
    'https://[fd00:ec2::254]/a.png',
    'https://0x7f.1/a.png',
    'https://2130706433/a.png',
  ])('refuses %s, a private address written in the URL', async (url) => {
    expect(await refusal(url, opts({ allowHosts: [] }))).toMatch(/not a public internet address/);
  });

  it('gives up on a server that never answers when the deadline passes', async () => {
    const started = Date.now();
    expect(await refusal(`${origin}/hang`, opts({ timeoutMs: 300 }))).toMatch(
      /no complete answer within 300 ms/,
    );
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('gives up on a body that stalls halfway when the deadline passes', async () => {
    expect(await refusal(`${origin}/stall`, opts({ timeoutMs: 300 }))).toMatch(
      /no complete answer within 300 ms/,
    );
  });

  it('refuses an error answer, a URL with credentials and text that is no URL', async () => {
    expect(await refusal(`${origin}/missing.png`)).toMatch(/answered HTTP 404/);
    expect(await refusal(`http://user:pw@127.0.0.1:${port}/a.png`)).toMatch(/credentials/);
    expect(await refusal('not a url')).toMatch(/not a URL/);
  });
});

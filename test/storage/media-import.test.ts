import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importMediaUrls } from '../../src/domain/media-import.ts';
import { AppError } from '../../src/platform/errors.ts';
import { createDiskStore } from '../../src/platform/storage/disk-store.ts';
import type { ObjectStore } from '../../src/platform/storage/object-store.ts';
import { PART_BYTES } from '../../src/platform/storage/s3-store.ts';
import { gif, html, mp4, png } from '../fakes/media/samples.ts';
import { readObject, testS3Store } from '../helpers/storage.ts';

// media_urls go into the organization's folder of the bucket in the order given, all or none: a
// refused URL anywhere in the list leaves no file behind and names the URL and the reason. On the
// disk, and on the S3 store when the run has a bucket (TEST_STORAGE_URL).

/** A video larger than one S3 part: it streams into the store as a multipart upload. */
const LONG_VIDEO = Buffer.concat([mp4(), Buffer.alloc(PART_BYTES + 4321, 7)]);

const ORG = '11111111-2222-3333-4444-555555555555';
const FILES: Record<string, Uint8Array> = {
  '/a.png': png(3, 4),
  '/b.mp4': mp4(),
  '/c.gif': gif(),
  '/tiny.gif': gif(1, 1, 100),
  '/page': html(),
  '/long.mp4': LONG_VIDEO,
};
let server: Server;
let origin: string;
let root: string;
let store: ObjectStore;

beforeAll(async () => {
  server = createServer((req, res) => {
    const file = FILES[req.url ?? ''];
    if (req.url === '/hang') return; // never answers
    if (req.url === '/to-loopback') {
      res.writeHead(302, { location: 'https://127.0.0.1:1/a.png' });
      return void res.end();
    }
    res.writeHead(file ? 200 : 404);
    res.end(file);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  root = mkdtempSync(path.join(tmpdir(), 'svc-import-'));
  store = testS3Store() ?? createDiskStore(root);
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

const deps = (options: { timeoutMs?: number; maxBytes?: number } = {}) => ({
  storage: store,
  options: { allowHosts: [new URL(origin).host], timeoutMs: 5000, ...options },
});
/** What the imports left in the organization's folder (the uploads a test put there aside). */
const filesLeft = async () =>
  (await store.list(`social-media/${ORG}/posts`, { limit: 100, offset: 0 })).map((o) => o.name);

describe('importMediaUrls', () => {
  it('stores every URL in order under the organization folder, typed by content', async () => {
    const d = deps();
    const media = await importMediaUrls(d, ORG, [`${origin}/b.mp4`, `${origin}/a.png`, `${origin}/c.gif`]);
    expect(media.map((m) => [m.position, m.mimeType, m.sourceUrl])).toEqual([
      [0, 'video/mp4', `${origin}/b.mp4`],
      [1, 'image/png', `${origin}/a.png`],
      [2, 'image/gif', `${origin}/c.gif`],
    ]);
    expect(media[1]).toMatchObject({ width: 3, height: 4, kind: 'image' });
    for (const m of media) {
      expect(m.path).toMatch(new RegExp(`^${ORG}/posts/[0-9a-f-]{36}\\.(mp4|png|gif)$`));
      expect(m.key).toBe(`social-media/${m.path}`);
      expect((await d.storage.get(m.key))?.contentType).toBe(m.mimeType);
    }
    await d.storage.remove(media.map((m) => m.key));
  });

  it.each([
    ['/page', /not a JPEG, PNG, GIF or WebP image/, {}],
    ['/missing.png', /answered HTTP 404/, {}],
    ['/to-loopback', /127\.0\.0\.1:1 is not a public internet address/, {}],
    ['/hang', /not fetched within 300 ms, the time allowed for all of a post’s media/, { timeoutMs: 300 }],
    ['/a.png', /larger than 1500 bytes/, { maxBytes: 1500 }],
  ])('fails whole on %s, naming it, and leaves no file behind', async (bad, reason, options) => {
    // Two that are stored first (small enough for every cap), then the one refused.
    const urls = [`${origin}/tiny.gif`, `${origin}/c.gif`, `${origin}${bad}`];
    const err = await importMediaUrls(deps(options), ORG, urls).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 400, code: 'validation_error' });
    const [issue] = (err as AppError).details.issues as { path: string; message: string }[];
    expect(issue?.path).toBe('media_urls.2');
    expect(issue?.message).toContain(`${origin}${bad}: `);
    expect(issue?.message).toMatch(reason);
    expect(await filesLeft()).toEqual([]);
  });

  it('streams a video larger than one part into the store byte for byte', async () => {
    const [media] = await importMediaUrls(deps(), ORG, [`${origin}/long.mp4`]);
    expect(media).toMatchObject({ mimeType: 'video/mp4', size: LONG_VIDEO.length });
    const stored = await readObject(store, media?.key as string);
    expect(Buffer.from(stored?.bytes ?? []).equals(LONG_VIDEO)).toBe(true);
    await store.remove([media?.key as string]);
  });
});

describe('importMediaUrls with URLs of the service’s own bucket', () => {
  const PUBLIC = 'https://svc.example.test';
  const own = (p: string, form = '') => `${PUBLIC}/storage/v1/object/${form}social-media/${p}`;
  const ownDeps = () => ({ ...deps(), publicUrl: PUBLIC });

  it('copies an uploaded file from the store (plain, signed or authenticated URL), never downloading it', async () => {
    const uploaded = png(5, 6);
    await store.put(`social-media/${ORG}/uploads/photo.png`, uploaded, 'image/png');
    const urls = [
      own(`${ORG}/uploads/photo.png`),
      `${own(`${ORG}/uploads/photo.png`, 'sign/')}?token=anything`,
      own(`${ORG}/uploads/photo.png`, 'authenticated/'),
    ];
    const media = await importMediaUrls(ownDeps(), ORG, urls);
    expect(media.map((m) => [m.position, m.mimeType, m.width, m.height, m.sourceUrl])).toEqual(
      urls.map((u, i) => [i, 'image/png', 5, 6, u]),
    );
    for (const m of media) {
      expect(m.path).toMatch(new RegExp(`^${ORG}/posts/[0-9a-f-]+\\.png$`));
      expect(Buffer.from((await readObject(store, m.key))?.bytes ?? []).equals(Buffer.from(uploaded))).toBe(
        true,
      );
    }
    await store.remove(media.map((m) => m.key));
    await store.remove([`social-media/${ORG}/uploads/photo.png`]);
  });

  it.each([
    [
      'another organization’s file, like a missing one',
      `99999999-2222-3333-4444-555555555555/uploads/photo.png`,
      /no such file in your organization/,
    ],
    ['a missing file', `${ORG}/uploads/none.png`, /no such file in your organization/],
    ['a file that is no image or video', `${ORG}/uploads/page.png`, /not a JPEG, PNG, GIF or WebP image/],
  ])('refuses %s and leaves no file behind', async (_, p, reason) => {
    await store.put(
      `social-media/99999999-2222-3333-4444-555555555555/uploads/photo.png`,
      png(),
      'image/png',
    );
    await store.put(`social-media/${ORG}/uploads/page.png`, html(), 'image/png');
    const err = await importMediaUrls(ownDeps(), ORG, [`${origin}/tiny.gif`, own(p)]).catch((e) => e);
    expect(err).toMatchObject({ status: 400, code: 'validation_error' });
    expect(((err as AppError).details.issues as { message: string }[])[0]?.message).toMatch(reason);
    await store.remove([
      `social-media/99999999-2222-3333-4444-555555555555/uploads/photo.png`,
      `social-media/${ORG}/uploads/page.png`,
    ]);
    expect(await filesLeft()).toEqual([]);
  });

  it('the same path on another host is an ordinary download, held to the download rules', async () => {
    const err = await importMediaUrls(ownDeps(), ORG, [
      `https://10.0.0.1/storage/v1/object/social-media/${ORG}/uploads/photo.png`,
    ]).catch((e) => e);
    expect(((err as AppError).details.issues as { message: string }[])[0]?.message).toMatch(
      /not a public internet address/,
    );
  });
});

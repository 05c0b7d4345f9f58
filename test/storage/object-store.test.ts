import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { UploadPartCommand } from '@aws-sdk/client-s3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readAll } from '../../src/platform/media-stream.ts';
import { createDiskStore } from '../../src/platform/storage/disk-store.ts';
import { InvalidKeyError, type ObjectStore } from '../../src/platform/storage/object-store.ts';
import { PART_BYTES } from '../../src/platform/storage/s3-store.ts';
import { readObject, TEST_STORAGE_URL, testS3Store } from '../helpers/storage.ts';

// The stores of /storage/v1, the disk always and the S3 one when the run has a bucket
// (TEST_STORAGE_URL, .ci/s3-server): objects round-trip with their content type and stream back
// byte for byte, listings show one folder level, removals say what they removed, a body that
// fails on its way leaves nothing (no object, no multipart upload), and no key escapes.

const bytes = (text: string) => new TextEncoder().encode(text);

/** `total` bytes of a repeating pattern, in chunks, failing with `fail` once `failAt` went through. */
function pattern(total: number, opts: { failAt?: number; fail?: Error } = {}) {
  const chunk = 256 * 1024;
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < total; sent += chunk) {
        if (opts.failAt !== undefined && sent >= opts.failAt) throw opts.fail;
        const size = Math.min(chunk, total - sent);
        yield Buffer.from(Array.from({ length: size }, (_, i) => (sent + i) % 251));
      }
    })(),
  );
}

const stores: [string, () => { store: ObjectStore; cleanup: () => void; root?: string }][] = [
  [
    'disk',
    () => {
      const root = mkdtempSync(path.join(tmpdir(), 'svc-store-'));
      return {
        store: createDiskStore(root),
        root,
        cleanup: () => rmSync(root, { recursive: true, force: true }),
      };
    },
  ],
];
if (TEST_STORAGE_URL) stores.push(['S3', () => ({ store: testS3Store() as ObjectStore, cleanup: () => {} })]);

describe.each(stores)('the %s object store', (name, open) => {
  let store: ObjectStore;
  let cleanup: () => void;
  let root: string | undefined;
  beforeEach(() => {
    ({ store, cleanup, root } = open());
  });
  afterEach(() => cleanup());

  it('gives back what was put, with its content type, size and time', async () => {
    expect(await store.put('social-media/org/a.png', bytes('png!'), 'image/png')).toBe(4);
    const got = await readObject(store, 'social-media/org/a.png');
    expect(got && new TextDecoder().decode(got.bytes)).toBe('png!');
    expect(got).toMatchObject({ contentType: 'image/png', size: 4 });
    expect(got?.updatedAt).toBeInstanceOf(Date);
    expect(await store.head('social-media/org/a.png')).toMatchObject({ contentType: 'image/png', size: 4 });
    expect(await store.get('social-media/org/none.png')).toBeNull();
    expect(await store.head('social-media/org/none.png')).toBeNull();
    expect(await store.get('social-media/org')).toBeNull(); // a folder is no object
  });

  it('streams a body of several parts in and back out byte for byte', async () => {
    const size = 2 * PART_BYTES + 12345; // three parts on S3: a multipart upload
    expect(await store.put('b/o/video.mp4', pattern(size), 'video/mp4')).toBe(size);
    const got = await store.get('b/o/video.mp4');
    expect(got).toMatchObject({ size, contentType: 'video/mp4' });
    const back = Buffer.from(await readAll(got?.body as Readable));
    expect(back.equals(Buffer.from(await readAll(pattern(size))))).toBe(true);
  });

  it('replaces an object whole and leaves no temporary file behind', async () => {
    await store.put('b/o/x', bytes('one'), 'image/gif');
    await store.put('b/o/x', bytes('second'), 'image/webp');
    expect(await store.head('b/o/x')).toMatchObject({ size: 6, contentType: 'image/webp' });
    if (root) expect(readdirSync(path.join(root, 'tmp'))).toEqual([]);
  });

  it('keeps nothing of a body that fails on its way, and the old object as it was', async () => {
    const tooLarge = new Error('past the limit');
    await store.put('b/o/kept.mp4', bytes('old'), 'image/png');
    const failing = store.put(
      'b/o/kept.mp4',
      pattern(3 * PART_BYTES, { failAt: PART_BYTES + 1, fail: tooLarge }),
      'video/mp4',
    );
    await expect(failing).rejects.toBe(tooLarge);
    expect(await store.head('b/o/kept.mp4')).toMatchObject({ size: 3, contentType: 'image/png' });
    await expect(
      store.put(
        'b/o/new.mp4',
        pattern(3 * PART_BYTES, { failAt: 2 * PART_BYTES, fail: tooLarge }),
        'video/mp4',
      ),
    ).rejects.toBe(tooLarge);
    expect(await store.head('b/o/new.mp4')).toBeNull();
    expect((await store.list('b/o', { limit: 10, offset: 0 })).map((o) => o.name)).toEqual(['kept.mp4']);
    if (root) expect(readdirSync(path.join(root, 'tmp'))).toEqual([]);
  });

  it.runIf(name === 'S3')(
    'aborts the multipart upload of a failed body, so no parts are left behind',
    async () => {
      const s3 = store as ReturnType<typeof testS3Store> & ObjectStore;
      const uploads: string[] = [];
      // The upload ids S3 hands out, watched on the client (the requests are real ones).
      s3.client.middlewareStack.add(
        (next) => async (args) => {
          const out = await next(args);
          const id = (out.output as { UploadId?: string }).UploadId;
          if (id) uploads.push(id);
          return out;
        },
        { step: 'initialize', name: 'watchUploadIds' },
      );
      const fail = new Error('cut off');
      await expect(
        s3.put('b/o/cut.mp4', pattern(3 * PART_BYTES, { failAt: 2 * PART_BYTES, fail }), 'video/mp4'),
      ).rejects.toBe(fail);
      expect(uploads).toHaveLength(1);
      const where = new URL(TEST_STORAGE_URL as string).hostname;
      const part = s3.client.send(
        new UploadPartCommand({ Bucket: where, Key: 'x', UploadId: uploads[0], PartNumber: 3, Body: 'x' }),
      );
      await expect(part).rejects.toMatchObject({ name: 'NoSuchUpload' });
    },
  );

  it('serves another request while 60 downloads are held open by clients slow to read them', async () => {
    await store.put('b/o/held.png', bytes('x'.repeat(300_000)), 'image/png');
    const held = [];
    for (let i = 0; i < 60; i++) held.push(await store.get('b/o/held.png'));
    expect(await store.head('b/o/held.png')).toMatchObject({ size: 300_000 });
    for (const h of held) h?.body.destroy();
  });

  it('lists one folder level by name, with sub-folders ending in /, paged and searched', async () => {
    for (const n of ['c.png', 'a.png', 'B.png', 'sub/d.png'])
      await store.put(`b/o/${n}`, bytes(n), 'image/png');
    const all = await store.list('b/o', { limit: 100, offset: 0 });
    expect(all.map((o) => o.name)).toEqual(['B.png', 'a.png', 'c.png', 'sub/']);
    expect(all[1]).toMatchObject({ size: 5, contentType: 'image/png' });
    expect((await store.list('b/o', { limit: 2, offset: 1 })).map((o) => o.name)).toEqual(['a.png', 'c.png']);
    expect((await store.list('b/o', { limit: 10, offset: 0, search: 'b' })).map((o) => o.name)).toEqual([
      'B.png',
    ]);
    expect(await store.list('b/nothing', { limit: 10, offset: 0 })).toEqual([]);
  });

  it('removes what exists, says which, and leaves no empty folders', async () => {
    await store.put('b/o/deep/x.png', bytes('x'), 'image/png');
    await store.put('b/o/y.png', bytes('y'), 'image/png');
    expect(await store.remove(['b/o/deep/x.png', 'b/o/missing.png', 'b/o/deep'])).toEqual(['b/o/deep/x.png']);
    expect((await store.list('b/o', { limit: 10, offset: 0 })).map((o) => o.name)).toEqual(['y.png']);
    await store.remove(['b/o/y.png']);
    expect(await store.list('b', { limit: 10, offset: 0 })).toEqual([]);
    if (root) {
      expect(readdirSync(path.join(root, 'objects'))).toEqual([]);
      expect(readdirSync(path.join(root, 'meta'))).toEqual([]);
    }
  });

  it.each(['../escape', 'b/../../etc/passwd', '/etc/passwd', 'b//x', 'b/./x', 'b/x\0.png', 'b\\x', ''])(
    'refuses the key %j',
    async (key) => {
      await expect(store.put(key, bytes('x'), 'image/png')).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.get(key)).rejects.toBeInstanceOf(InvalidKeyError);
    },
  );
});

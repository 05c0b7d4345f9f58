import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDiskStore } from '../../src/platform/storage/disk-store.ts';
import { InvalidKeyError, type ObjectStore } from '../../src/platform/storage/object-store.ts';

// The disk backend of /storage/v1: objects round-trip with their content type, listings show one
// folder level, removals leave no empty folders and no key escapes the storage directory.

let root: string;
let store: ObjectStore;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'svc-store-'));
  store = createDiskStore(root);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const bytes = (text: string) => new TextEncoder().encode(text);

describe('the disk object store', () => {
  it('gives back what was put, with its content type, size and time', async () => {
    await store.put('social-media/org/a.png', bytes('png!'), 'image/png');
    const got = await store.get('social-media/org/a.png');
    expect(got && new TextDecoder().decode(got.bytes)).toBe('png!');
    expect(got).toMatchObject({ contentType: 'image/png', size: 4 });
    expect(got?.updatedAt).toBeInstanceOf(Date);
    expect(await store.get('social-media/org/none.png')).toBeNull();
    expect(await store.get('social-media/org')).toBeNull(); // a folder is no object
  });

  it('replaces an object whole and leaves no temporary file behind', async () => {
    await store.put('b/o/x', bytes('one'), 'image/gif');
    await store.put('b/o/x', bytes('second'), 'image/webp');
    expect(await store.get('b/o/x')).toMatchObject({ size: 6, contentType: 'image/webp' });
    expect(readdirSync(path.join(root, 'tmp'))).toEqual([]);
  });

  it('lists one folder level by name, with sub-folders ending in /, paged and searched', async () => {
    for (const name of ['c.png', 'a.png', 'B.png', 'sub/d.png'])
      await store.put(`b/o/${name}`, bytes(name), 'image/png');
    const all = await store.list('b/o', { limit: 100, offset: 0 });
    expect(all.map((o) => o.name)).toEqual(['B.png', 'a.png', 'c.png', 'sub/']);
    expect(all[1]).toMatchObject({ size: 5, contentType: 'image/png' });
    expect((await store.list('b/o', { limit: 2, offset: 1 })).map((o) => o.name)).toEqual(['a.png', 'c.png']);
    expect((await store.list('b/o', { limit: 10, offset: 0, search: 'b' })).map((o) => o.name)).toEqual([
      'B.png',
    ]);
    expect(await store.list('b/nothing', { limit: 10, offset: 0 })).toEqual([]);
  });

  it('removes what exists, says which, and prunes the folders it emptied', async () => {
    await store.put('b/o/deep/x.png', bytes('x'), 'image/png');
    await store.put('b/o/y.png', bytes('y'), 'image/png');
    expect(await store.remove(['b/o/deep/x.png', 'b/o/missing.png', 'b/o/deep'])).toEqual(['b/o/deep/x.png']);
    expect((await store.list('b/o', { limit: 10, offset: 0 })).map((o) => o.name)).toEqual(['y.png']);
    await store.remove(['b/o/y.png']);
    expect(readdirSync(path.join(root, 'objects'))).toEqual([]);
    expect(readdirSync(path.join(root, 'meta'))).toEqual([]);
  });

  it.each(['../escape', 'b/../../etc/passwd', '/etc/passwd', 'b//x', 'b/./x', 'b/x\0.png', 'b\\x', ''])(
    'refuses the key %j',
    async (key) => {
      await expect(store.put(key, bytes('x'), 'image/png')).rejects.toBeInstanceOf(InvalidKeyError);
      await expect(store.get(key)).rejects.toBeInstanceOf(InvalidKeyError);
    },
  );
});

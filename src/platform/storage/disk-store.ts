import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidKeyError, type ListedObject, type ObjectStore, objectKey } from './object-store.ts';

// The ObjectStore on a local disk (STORAGE_DIR, by default DATA_DIR/storage):
//   objects/<bucket>/<path>        the bytes
//   meta/<bucket>/<path>.json      {"contentType": …} (a sidecar: no xattrs, any filesystem)
//   tmp/                           files being written
// A file is written under tmp/ and renamed into place (one filesystem, so rename is atomic):
// a reader sees the old object or the new one, never a part. Folders left empty by a removal are
// removed too, as a listing of an object store never shows empty folders. One limit a disk has
// and S3 has not: `a` and `a/b` cannot both exist (InvalidKeyError).

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code;

export function createDiskStore(root: string): ObjectStore {
  const objects = path.join(root, 'objects');
  const meta = path.join(root, 'meta');
  const tmp = path.join(root, 'tmp');
  const fileOf = (key: string) => path.join(objects, ...objectKey(key).split('/'));
  const metaOf = (key: string) => `${path.join(meta, ...objectKey(key).split('/'))}.json`;

  /** Writes `content` to `file` whole or not at all. */
  async function publish(file: string, content: Uint8Array | string): Promise<void> {
    await mkdir(tmp, { recursive: true });
    const temp = path.join(tmp, `${process.pid}.${randomBytes(8).toString('hex')}`);
    await writeFile(temp, content, { mode: 0o600 });
    try {
      // Twice: a concurrent removal may prune the folder between mkdir and rename.
      for (let attempt = 0; ; attempt++) {
        try {
          await mkdir(path.dirname(file), { recursive: true });
          await rename(temp, file);
          return;
        } catch (err) {
          if (errno(err) === 'ENOTDIR' || errno(err) === 'EEXIST' || errno(err) === 'EISDIR')
            throw new InvalidKeyError('a file and a folder of the same name cannot both exist here');
          if (errno(err) !== 'ENOENT' || attempt > 0) throw err;
        }
      }
    } finally {
      await rm(temp, { force: true });
    }
  }

  /** Removes the folders a removal left empty, from `dir` up to (not including) `top`. */
  async function prune(dir: string, top: string): Promise<void> {
    for (let d = dir; d.startsWith(`${top}${path.sep}`); d = path.dirname(d)) {
      try {
        await rmdir(d);
      } catch {
        return; // not empty (or gone): so is every folder above it
      }
    }
  }

  async function contentTypeOf(key: string): Promise<string> {
    try {
      const parsed = JSON.parse(await readFile(metaOf(key), 'utf8')) as { contentType?: unknown };
      if (typeof parsed.contentType === 'string') return parsed.contentType;
    } catch {}
    return 'application/octet-stream';
  }

  return {
    async put(key, bytes, contentType) {
      const file = fileOf(key);
      await publish(metaOf(key), JSON.stringify({ contentType }));
      await publish(file, bytes);
    },

    async get(key) {
      const file = fileOf(key);
      try {
        const [bytes, info] = await Promise.all([readFile(file), stat(file)]);
        return {
          bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length),
          contentType: await contentTypeOf(key),
          size: bytes.length,
          updatedAt: info.mtime,
        };
      } catch (err) {
        if (errno(err) === 'ENOENT' || errno(err) === 'EISDIR' || errno(err) === 'ENOTDIR') return null;
        throw err;
      }
    },

    async head(key) {
      try {
        const info = await stat(fileOf(key));
        if (!info.isFile()) return null;
        return { contentType: await contentTypeOf(key), size: info.size, updatedAt: info.mtime };
      } catch (err) {
        if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return null;
        throw err;
      }
    },

    async remove(keys) {
      const removed: string[] = [];
      for (const key of new Set(keys)) {
        const file = fileOf(key);
        try {
          await unlink(file);
          removed.push(key);
        } catch (err) {
          if (!['ENOENT', 'EISDIR', 'EPERM', 'ENOTDIR'].includes(errno(err) ?? '')) throw err;
          continue;
        }
        await rm(metaOf(key), { force: true });
        await prune(path.dirname(file), objects);
        await prune(path.dirname(metaOf(key)), meta);
      }
      return removed;
    },

    async list(prefix, { limit, offset, search }) {
      const dir = prefix === '' ? objects : fileOf(prefix);
      let entries: Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if (errno(err) === 'ENOENT' || errno(err) === 'ENOTDIR') return [];
        throw err;
      }
      const wanted = search?.toLowerCase();
      const page = entries
        .filter(
          (e) => (e.isFile() || e.isDirectory()) && (!wanted || e.name.toLowerCase().startsWith(wanted)),
        )
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .slice(offset, offset + limit);
      const listed = await Promise.all(
        page.map(async (e): Promise<ListedObject | null> => {
          if (e.isDirectory())
            return { name: `${e.name}/`, size: 0, contentType: '', updatedAt: new Date(0) };
          const key = prefix === '' ? e.name : `${prefix}/${e.name}`;
          // Removed since the folder was read: left out, as if listed a moment later.
          const info = await stat(path.join(dir, e.name)).catch(() => null);
          if (!info) return null;
          return {
            name: e.name,
            size: info.size,
            contentType: await contentTypeOf(key),
            updatedAt: info.mtime,
          };
        }),
      );
      return listed.filter((o): o is ListedObject => o !== null);
    },
  };
}

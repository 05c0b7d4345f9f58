import { randomBytes } from 'node:crypto';
import { createWriteStream, type Dirent } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  InvalidKeyError,
  type ListedObject,
  type ObjectBody,
  type ObjectStore,
  objectKey,
} from './object-store.ts';

// The ObjectStore on a local disk (STORAGE_DIR, by default DATA_DIR/storage):
//   objects/<bucket>/<path>        the bytes
//   meta/<bucket>/<path>.json      {"contentType": …} (a sidecar: no xattrs, any filesystem)
//   tmp/                           files being written
// A file is streamed into tmp/ and renamed into place (one filesystem, so rename is atomic):
// a reader sees the old object or the new one, never a part; a body that fails on the way leaves
// the temporary file removed and the old object (and its type) as they were. Reads stream from
// the file opened once (its size and its bytes are of the same file, even if replaced meanwhile). Folders left empty by a removal are
// removed too, as a listing of an object store never shows empty folders. One limit a disk has
// and S3 has not: `a` and `a/b` cannot both exist (InvalidKeyError).

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code;

export function createDiskStore(root: string): ObjectStore {
  const objects = path.join(root, 'objects');
  const meta = path.join(root, 'meta');
  const tmp = path.join(root, 'tmp');
  const fileOf = (key: string) => path.join(objects, ...objectKey(key).split('/'));
  const metaOf = (key: string) => `${path.join(meta, ...objectKey(key).split('/'))}.json`;

  const tempName = () => path.join(tmp, `${process.pid}.${randomBytes(8).toString('hex')}`);

  /** Streams `body` into a temporary file; its path and size, or nothing left behind. */
  async function spool(body: ObjectBody): Promise<{ temp: string; size: number }> {
    await mkdir(tmp, { recursive: true });
    const temp = tempName();
    let size = 0;
    const source = body instanceof Uint8Array ? Readable.from([body]) : body;
    try {
      await pipeline(
        source,
        async function* (chunks: AsyncIterable<Uint8Array>) {
          for await (const chunk of chunks) {
            size += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(temp, { mode: 0o600 }),
      );
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    return { temp, size };
  }

  /** Writes `content` to `file` whole or not at all. */
  async function publish(file: string, content: string): Promise<void> {
    await mkdir(tmp, { recursive: true });
    const temp = tempName();
    await writeFile(temp, content, { mode: 0o600 });
    await publishTemp(temp, file);
  }

  /** Moves a finished temporary file into place (atomically: one filesystem). */
  async function publishTemp(temp: string, file: string): Promise<void> {
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
    async put(key, body, contentType) {
      const file = fileOf(key);
      const meta = metaOf(key);
      // The bytes first: a body refused on its way must not leave the old object with a new type.
      const { temp, size } = await spool(body);
      try {
        await publish(meta, JSON.stringify({ contentType }));
      } catch (err) {
        await rm(temp, { force: true });
        throw err;
      }
      await publishTemp(temp, file);
      return size;
    },

    async get(key) {
      const file = fileOf(key);
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(file, 'r');
      } catch (err) {
        if (errno(err) === 'ENOENT' || errno(err) === 'EISDIR' || errno(err) === 'ENOTDIR') return null;
        throw err;
      }
      try {
        const info = await handle.stat();
        if (!info.isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
        return {
          body: handle.createReadStream({ autoClose: true }),
          contentType: await contentTypeOf(key),
          size: info.size,
          updatedAt: info.mtime,
        };
      } catch (err) {
        await handle.close();
        if (errno(err) === 'EISDIR') return null;
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

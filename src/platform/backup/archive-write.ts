import { createHash, randomBytes } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import { createWriteStream, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { createGzip, type Gzip } from 'node:zlib';
import { Header, Pax } from 'tar';

// A backup file is a gzip'd tar (docs/operations.md, "Backups"), readable with `tar tzf`. This
// writes one entry after another, streaming each file from disk, and keeps each entry's size and
// SHA-256 for the manifest the caller writes last. The file appears whole or not at all: written
// under a temporary name (mode 0600 from its creation: it holds every tenant's rows and the keys),
// flushed to disk, then renamed into place.

export type ArchivedEntry = { name: string; size: number; sha256: string };

export type ArchiveWriter = {
  /** Adds the file at `source` as `name`; it must not change size while it is read. */
  addFile(name: string, source: string): Promise<ArchivedEntry>;
  addBytes(name: string, data: Buffer): Promise<ArchivedEntry>;
  readonly entries: readonly ArchivedEntry[];
};

const BLOCK = 512;

export async function writeArchive(file: string, fill: (w: ArchiveWriter) => Promise<void>): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const out = createWriteStream(tmp, { mode: 0o600, flags: 'wx' });
  const gzip = createGzip();
  gzip.pipe(out);
  const failed = new Promise<never>((_, reject) => {
    out.once('error', reject);
    gzip.once('error', reject);
  });
  failed.catch(() => {}); // observed through the races below
  const put = (chunk: Buffer) =>
    gzip.write(chunk) ? Promise.resolve() : Promise.race([new Promise((r) => gzip.once('drain', r)), failed]);

  const entries: ArchivedEntry[] = [];
  const header = async (name: string, size: number) => {
    const h = new Header({ path: name, mode: 0o600, size, mtime: new Date(), type: 'File', uid: 0, gid: 0 });
    const block = Buffer.alloc(BLOCK);
    // A name over ustar's 100 (+155) characters goes in a pax header before it.
    if (h.encode(block)) await put(new Pax({ path: name }).encode());
    await put(block);
  };
  const pad = (size: number) =>
    size % BLOCK ? put(Buffer.alloc(BLOCK - (size % BLOCK))) : Promise.resolve();

  const writer: ArchiveWriter = {
    entries,
    async addBytes(name, data) {
      await header(name, data.length);
      await put(data);
      await pad(data.length);
      const entry = { name, size: data.length, sha256: createHash('sha256').update(data).digest('hex') };
      entries.push(entry);
      return entry;
    },
    async addFile(name, source) {
      // One open file: a file replaced meanwhile (the bucket renames new versions into place) is
      // read whole as it was when opened.
      const fh = await open(source, 'r');
      try {
        const { size } = await fh.stat();
        await header(name, size);
        const hash = createHash('sha256');
        let read = 0;
        for await (const chunk of fh.createReadStream({
          autoClose: false,
          start: 0,
        }) as AsyncIterable<Buffer>) {
          read += chunk.length;
          if (read > size) break;
          hash.update(chunk);
          await put(chunk);
        }
        if (read !== size) throw new Error(`${source} changed size while it was read`);
        await pad(size);
        const entry = { name, size, sha256: hash.digest('hex') };
        entries.push(entry);
        return entry;
      } finally {
        await fh.close();
      }
    },
  };

  try {
    await fill(writer);
    await put(Buffer.alloc(BLOCK * 2)); // tar's end: two empty blocks
    await Promise.race([finished(gzip, out), failed]);
    const fh = await open(tmp, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    gzip.destroy();
    out.destroy();
    rmSync(tmp, { force: true });
    throw err;
  }
}

const finished = (gzip: Gzip, out: WriteStream) =>
  new Promise<void>((resolve) => {
    out.once('close', () => resolve());
    gzip.end();
  });

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import type { ArchivedEntry } from './archive-write.ts';

// Reads a backup file (archive-write.ts) entry by entry, streaming each body to `onEntry`, and
// gives back every entry's size and SHA-256 as read. Anything that is not a whole, well-formed
// gzip'd tar of plain files fails with BackupUnreadable: gzip's CRC and length catch a damaged
// or truncated file, node-tar's strict parser a broken tar; the caller compares what was read
// with the manifest, written last, which a cut-short archive lacks.

export class BackupUnreadable extends Error {}

export async function readArchive(
  file: string,
  onEntry: (name: string, body: AsyncIterable<Buffer>) => Promise<void>,
): Promise<ArchivedEntry[]> {
  const entries: ArchivedEntry[] = [];
  const handled: Promise<void>[] = [];
  let announced = 0;
  // Observed at once (a rejection nobody handles yet would end the process), settled at the end.
  const track = (p: Promise<void>) => {
    p.catch(() => {});
    handled.push(p);
  };
  const parser = new Parser({ strict: true });
  const input = createReadStream(file);
  const gunzip = createGunzip();

  let current: ReadEntry | undefined;
  const done = new Promise<void>((resolve, reject) => {
    const fail = (what: string) => (err: Error) => {
      input.destroy();
      gunzip.destroy();
      current?.destroy(); // its reader stops instead of waiting for the rest
      reject(new BackupUnreadable(`${what}: ${err.message}`));
    };
    // `on`, not `once`: a strict parser reports each bad block, and an unheard 'error' throws.
    input.on('error', (err) => reject(err)); // a missing or unreadable file: as the system says
    gunzip.on('error', fail('not a whole gzip file (damaged or cut short)'));
    parser.on('error', fail('not a well-formed tar archive'));
    parser.once('end', () => resolve());
  });

  parser.on('entry', (entry: ReadEntry) => {
    current = entry;
    if (entry.type !== 'File') {
      entry.resume();
      track(Promise.reject(new BackupUnreadable(`unexpected ${entry.type} entry ${entry.path}`)));
      return;
    }
    const hash = createHash('sha256');
    let size = 0;
    const name = entry.path;
    const index = announced++; // entries finish in any order; they are given back in the archive's
    const body = (async function* () {
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        size += chunk.length;
        hash.update(chunk);
        yield chunk;
      }
    })();
    track(
      onEntry(name, body).then(
        async () => {
          for await (const _ of body); // whatever onEntry left unread
          entries[index] = { name, size, sha256: hash.digest('hex') };
        },
        (err) => {
          entry.resume(); // the archive is still read to its end, and its damage still found
          throw err;
        },
      ),
    );
  });
  input.pipe(gunzip).pipe(parser as unknown as NodeJS.WritableStream);

  const read = await Promise.allSettled([done]);
  // Every entry was announced before the end (or the failure): all of them are in `handled` now.
  const results = await Promise.allSettled(handled);
  // A damaged archive is the reason to give, before whatever it made a handler fail with.
  const failure = [...read, ...results].find((r) => r.status === 'rejected');
  if (failure) throw (failure as PromiseRejectedResult).reason;
  return entries;
}

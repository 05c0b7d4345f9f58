import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Database } from '../db/database.ts';

// The embedded database's part of a backup: PGlite's data directory as a tar, written by the one
// process that has the database open into DATA_DIR/backup-dumps/ (0600, in the private DATA_DIR),
// where `svc backup` (src/cli/backup.ts) picks it up and puts it into the backup file. The dump
// stays on this machine: the running service is asked to write it, never to send it over HTTP.
// Takes the database and DATA_DIR; gives the dump's file name in that folder.

export const DUMPS_DIR = 'backup-dumps';
/** A dump nobody picked up (the command died) is removed when the next one is made. */
const FORGOTTEN_MS = 60 * 60 * 1000;
const NAME = /^[0-9]{13}-[0-9a-f]{16}\.tar$/;

export async function dumpDatabase(db: Database, dataDir: string): Promise<string> {
  // Callers check first (a 409 at the function, a message in `svc backup`); this is the guard.
  if (!db.dumpDataDir)
    throw new Error('only the embedded database is dumped by svc; on PostgreSQL use pg_dump');
  const dir = path.join(dataDir, DUMPS_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  removeForgotten(dir, Date.now());
  const name = `${Date.now()}-${randomBytes(8).toString('hex')}.tar`;
  const file = path.join(dir, name);
  const part = `${file}.part`;
  try {
    const dump = await db.dumpDataDir();
    await writeFile(part, Readable.fromWeb(dump.stream() as WebReadableStream), { mode: 0o600 });
    await rename(part, file);
  } catch (err) {
    rmSync(part, { force: true });
    throw err;
  }
  return name;
}

/** The path of a dump `dumpDatabase` named, or null for any other name (never outside the folder). */
export function dumpPath(dataDir: string, name: string): string | null {
  return NAME.test(name) ? path.join(dataDir, DUMPS_DIR, name) : null;
}

function removeForgotten(dir: string, now: number) {
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    try {
      if (now - statSync(file).mtimeMs > FORGOTTEN_MS) rmSync(file, { force: true });
    } catch {}
  }
}

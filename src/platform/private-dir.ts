import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

// DATA_DIR holds every tenant's rows (the embedded database), the signing and secrets keys, the
// bucket's files and the development outbox: nobody but the service's own user may read or
// change any of it (docs/operations.md, "Files and permissions"). So, whatever the umask:
// - the process creates what it creates from now on with umask 077 (folders 0700, files 0600);
// - DATA_DIR is 0700, every folder in it 0700 and every file 0600, fixed at each start; PGlite
//   chmods its own files to 0666 whatever the umask, so db/open.ts runs tightenTree again over
//   DATA_DIR/pglite once the database is open and after it is closed (a file it makes while
//   running is 0666 until then, inside folders no other user can enter);
// - a DATA_DIR that other users can write (mode g+w or o+w) is refused, not fixed: anyone could
//   have replaced its keys or database files, which a chmod would quietly bless.
// Takes a directory; gives the number of entries whose mode it changed, or throws DataDirExposed.

export class DataDirExposed extends Error {}

const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;

/** Creates `dir` if needed and makes it and everything in it private to this user. */
export function makePrivate(dir: string, label = 'DATA_DIR'): number {
  privateUmask();
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  const mode = statSync(dir).mode & 0o777;
  if (mode & 0o022) {
    throw new DataDirExposed(
      `${label} ${dir} can be written by other users (mode ${mode.toString(8).padStart(4, '0')}): ` +
        'they could have replaced its keys or database files. Check what is in it, then make it ' +
        `private (chmod 700 ${dir}; chown it to the user the service runs as) and start again.`,
    );
  }
  let changed = 0;
  if (mode !== PRIVATE_DIR) {
    chmodSync(dir, PRIVATE_DIR);
    changed++;
  }
  return changed + tightenTree(dir);
}

/**
 * Every folder under `dir` 0700 and every file 0600; symbolic links are neither followed nor
 * changed (a link may point outside, at something that is not ours to change).
 */
export function tightenTree(dir: string): number {
  let changed = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  for (const name of entries) {
    const entry = path.join(dir, name);
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(entry);
    } catch {
      continue; // removed meanwhile
    }
    if (info.isSymbolicLink()) continue;
    const wanted = info.isDirectory() ? PRIVATE_DIR : PRIVATE_FILE;
    if ((info.mode & 0o777) !== wanted) {
      chmodSync(entry, wanted);
      changed++;
    }
    if (info.isDirectory()) changed += tightenTree(entry);
  }
  return changed;
}

/** umask 077 for the rest of the process (worker threads cannot change it; their parent did). */
function privateUmask(): void {
  try {
    process.umask(0o077);
  } catch {}
}

import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/**
 * One process per embedded data directory. PGlite has a single writer and no cross-process
 * locking of its own: two processes on one directory each keep their own copy in memory and the
 * last to flush wins, so accounts made through one vanish. Whoever opens DATA_DIR/pglite first
 * holds DATA_DIR/svc.lock; the file names it (pid, command, URL once listening), so a second
 * process is refused with a message saying which one runs, and the CLI finds the running service's
 * URL there. A lock whose pid is no longer alive (a crash, kill -9) is stale and taken over.
 */
export const LOCK_FILE = 'svc.lock';

export type LockHolder = {
  pid: number;
  /**
   * The machine (or container) whose process table `pid` belongs to: a pid says nothing about a
   * process elsewhere, so only a lock taken on this host can be judged stale.
   */
  host: string;
  command: string;
  /** The service's base URL once it listens; null while starting and for other commands. */
  url: string | null;
  started_at: string;
  /** Tells this holder from a later one with the same pid (a restart within one process). */
  token: string;
};

export type DataDirLock = {
  holder: LockHolder;
  /** Records the URL the service listens on, for `svc keys` and for refusal messages. */
  setUrl(url: string): void;
  /** Removes the lock if it is still this holder's; safe to call more than once. */
  release(): void;
};

export class DataDirLocked extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    const where = holder.url ? `at ${holder.url}` : holder.command === 'start' ? 'still starting' : '';
    super(
      `${dataDir} is in use by another svc process (pid ${holder.pid}${holder.host === hostname() ? '' : ` on host ${holder.host}`}, svc ${holder.command}${where ? `, ${where}` : ''}). ` +
        'The embedded database allows one process per data directory: stop that process or use another DATA_DIR ' +
        '(set DATABASE_URL to run several processes on PostgreSQL). ' +
        `If no such process runs, delete ${path.join(dataDir, LOCK_FILE)}.`,
    );
  }
}

/** Whether a process with this pid exists (EPERM: it does, under another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
    return Number.isInteger(h.pid) && h.pid > 0 && typeof h.host === 'string' ? h : null;
  } catch {
    return null; // absent, or unreadable (treated as stale)
  }
}

/** Lock files this process holds. */
const held = new Set<string>();

/**
 * Whether a lock's holder still runs. One taken on another host (another container on the same
 * volume, where the holder may well be pid 1 too) cannot be judged from here: it counts as live.
 * A lock naming this very process that it does not hold was left by an earlier process that had
 * the same pid: a container restarted after a crash runs its entry point as pid 1 again (same
 * host name), and would otherwise refuse to start forever.
 */
const holds = (file: string, h: LockHolder) =>
  h.host !== hostname() || (h.pid === process.pid ? held.has(file) : isAlive(h.pid));

/** The live holder of a data directory's lock, if any (e.g. the running service and its URL). */
export function lockHolder(dataDir: string): LockHolder | null {
  const file = path.join(dataDir, LOCK_FILE);
  const holder = readHolder(file);
  return holder && holds(file, holder) ? holder : null;
}

/** Writes `content` to a temporary file beside `file`, then moves it into place as a whole. */
function place(file: string, content: string, into: (tmp: string) => void) {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, content, { mode: 0o644 });
  try {
    into(tmp);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Takes the lock for `command` or throws DataDirLocked naming the live holder. The file appears
 * whole or not at all (link of a complete temporary file fails if the name exists), so a reader
 * never sees half a holder. A stale lock is moved aside by rename, which only one of two
 * processes racing for it can do, and the winner checks that what it moved was the stale one.
 */
export function lockDataDir(dataDir: string, command: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  const holder: LockHolder = {
    pid: process.pid,
    host: hostname(),
    command,
    url: null,
    started_at: new Date().toISOString(),
    token: randomBytes(8).toString('hex'),
  };
  for (let attempt = 0; ; attempt++) {
    try {
      place(file, JSON.stringify(holder), (tmp) => linkSync(tmp, file));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
    }
    const current = readHolder(file);
    if (current && holds(file, current)) throw new DataDirLocked(dataDir, current);
    const aside = `${file}.stale.${holder.token}`;
    try {
      renameSync(file, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // someone else moved it
      throw err;
    }
    const moved = readHolder(aside);
    if (moved && moved.token !== current?.token && holds(file, moved)) {
      // Another process took the stale lock over between our read and our rename: give it back,
      // unless a third has linked its own meanwhile (link, unlike rename, never replaces a file).
      try {
        linkSync(aside, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        rmSync(aside, { force: true });
      }
      throw new DataDirLocked(dataDir, moved);
    }
    rmSync(aside, { force: true });
  }

  held.add(file);
  const ours = () => readHolder(file)?.token === holder.token;
  const release = () => {
    process.off('exit', release);
    if (ours()) rmSync(file, { force: true });
    held.delete(file);
  };
  // process.exit() (a failed start, a fatal error) runs exit handlers synchronously.
  process.on('exit', release);
  return {
    holder,
    setUrl(url) {
      holder.url = url;
      if (ours()) place(file, JSON.stringify(holder), (tmp) => renameSync(tmp, file));
    },
    release,
  };
}

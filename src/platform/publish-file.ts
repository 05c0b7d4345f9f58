import { randomBytes } from 'node:crypto';
import { linkSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Publishes a file whole or not at all (mode 0600): written under a temporary name, then linked
 * (only if absent) or renamed into place, so another process never reads it half-written.
 * Returns false when `replace` is false and the file already exists (another process won).
 */
export function publishFile(file: string, content: string, replace: boolean): boolean {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  try {
    if (replace) renameSync(tmp, file);
    else linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

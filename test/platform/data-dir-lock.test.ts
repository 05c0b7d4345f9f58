// The data-directory lock in-process: who counts as its live holder. The CLI tests
// (lifecycle.test.ts) cover two real processes; these cover what they cannot stage.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLocked, LOCK_FILE, lockDataDir, lockHolder } from '../../src/platform/data-dir-lock.ts';

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-lock-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the data-directory lock', () => {
  it('refuses a second holder in the same process and frees the directory on release', () => {
    const dir = freshDir();
    const lock = lockDataDir(dir, 'start');
    expect(() => lockDataDir(dir, 'migrate')).toThrow(DataDirLocked);
    expect(lockHolder(dir)?.pid).toBe(process.pid);
    lock.release();
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    lockDataDir(dir, 'migrate').release();
  });

  it('takes over a lock left by an earlier process that had this pid (a restarted container)', () => {
    const dir = freshDir();
    const left = {
      pid: process.pid,
      host: hostname(),
      command: 'start',
      url: 'http://127.0.0.1:1',
      started_at: '',
      token: 'old',
    };
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify(left));
    expect(lockHolder(dir)).toBeNull();
    const lock = lockDataDir(dir, 'start');
    expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')).token).toBe(lock.holder.token);
    lock.release();
  });

  it('refuses a lock taken on another host, whose pid means nothing here (another container)', () => {
    const dir = freshDir();
    const elsewhere = {
      pid: 1,
      host: 'other-container',
      command: 'start',
      url: null,
      started_at: '',
      token: 't',
    };
    writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify(elsewhere));
    expect(lockHolder(dir)?.host).toBe('other-container');
    expect(() => lockDataDir(dir, 'migrate')).toThrow(/pid 1 on host other-container/);
    expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')).token).toBe('t');
  });
});

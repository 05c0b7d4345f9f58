// DATA_DIR is private to the service's user whatever the umask it starts with: the embedded
// database's files (PGlite makes them 0666 on its own), the signing and secrets keys, the bucket's
// files and the development outbox are 0600 in 0700 folders, while it runs and after it stops;
// an old install's loose modes are fixed at start (with a warning); a DATA_DIR that other users
// can write is refused before anything is read from or written to it.

import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/main.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { DataDirExposed } from '../../src/platform/private-dir.ts';
import { png } from '../fakes/media/samples.ts';
import { type FreshDatabase, freshDatabase, onPostgres } from '../helpers/db.ts';

const root = mkdtempSync(path.join(tmpdir(), 'svc-perm-'));
const startUmask = process.umask();
afterAll(() => {
  process.umask(startUmask);
  rmSync(root, { recursive: true, force: true });
});

/** `mode path` of every entry under `dir` (symbolic links left out), and of `dir` itself. */
function modes(dir: string): string[] {
  const out = [`${(statSync(dir).mode & 0o777).toString(8)} .`];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const info = statSync(path.join(dir, name), { throwIfNoEntry: false });
    if (info) out.push(`${(info.mode & 0o777).toString(8)} ${name}`);
  }
  return out;
}
const loose = (dir: string) =>
  modes(dir).filter((line) => !/^(600|700) /.test(line) || (line.endsWith(' .') && !line.startsWith('700')));

const config = (dataDir: string, fresh?: FreshDatabase) =>
  loadConfig({
    PORT: '0',
    DATA_DIR: dataDir,
    BCRYPT_COST: '10',
    LOG_LEVEL: 'info',
    ...(fresh?.url ? { DATABASE_URL: fresh.url } : {}),
  });

describe('DATA_DIR permissions', () => {
  it('started with umask 022, every file is 0600 and every folder 0700, while running and after', async () => {
    process.umask(0o022);
    const dataDir = path.join(root, 'data');
    // An older install: world-readable folders and files, fixed at this start.
    mkdirSync(path.join(dataDir, 'outbox'), { recursive: true, mode: 0o755 });
    writeFileSync(path.join(dataDir, 'outbox', 'old-mail.json'), '{}', { mode: 0o666 });
    chmodSync(path.join(dataDir, 'outbox', 'old-mail.json'), 0o666);
    // The embedded database as the run's migrated template (a fresh initdb takes a minute here);
    // PGlite writes its files 0666 whatever the umask, as it did for the probe.
    const fresh = onPostgres() ? await freshDatabase() : undefined;
    if (!fresh) {
      const template = new Blob([readFileSync(inject('pgliteTemplate'))]);
      await (await openPglite(path.join(dataDir, 'pglite'), template)).close();
    }
    expect(loose(dataDir).length).toBeGreaterThan(0);

    // On PostgreSQL the data directory still holds the keys, the bucket and the outbox; on the
    // embedded default it also holds the database.
    const lines: string[] = [];
    const svc = await startService(config(dataDir, fresh), {
      logDestination: new Writable({
        write(chunk, _enc, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }),
    });
    try {
      const keys = svc.services.keys;
      const signup = await fetch(`${svc.url}/auth/v1/signup`, {
        method: 'POST',
        headers: { apikey: keys.anonKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          email: `perm-${process.pid}@example.test`,
          password: 'password-8',
          data: { organization_name: 'Private Files' },
        }),
      });
      expect(signup.status).toBe(200);
      const { access_token } = (await signup.json()) as { access_token: string };
      const claims = JSON.parse(Buffer.from(access_token.split('.')[1] as string, 'base64url').toString());
      const upload = await fetch(
        `${svc.url}/storage/v1/object/social-media/${claims.app_metadata.organization_id}/posts/a.png`,
        { method: 'POST', headers: { authorization: `Bearer ${keys.serviceRoleKey}` }, body: png(2, 2) },
      );
      expect(upload.status).toBe(200);
      const recover = await fetch(`${svc.url}/auth/v1/recover`, {
        method: 'POST',
        headers: { apikey: keys.anonKey, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `perm-${process.pid}@example.test` }),
      });
      expect(recover.status).toBe(200);
      await svc.services.mail.settled();

      const names = modes(dataDir).map((line) => line.slice(4));
      expect(names).toEqual(
        expect.arrayContaining(['keys.json', 'secrets.key', 'storage', 'outbox', 'outbox/old-mail.json']),
      );
      if (!fresh) expect(names.filter((n) => n.startsWith('pglite/')).length).toBeGreaterThan(100);
      expect(names.filter((n) => n.startsWith('storage/objects/social-media/')).length).toBeGreaterThan(0);
      expect(loose(dataDir)).toEqual([]);
      expect(lines.join('')).toMatch(/other users could read were made private/);
    } finally {
      await svc.close();
      await fresh?.drop();
    }
    expect(loose(dataDir)).toEqual([]);
  }, 120_000);

  it.each([0o777, 0o775, 0o757])(
    'refuses a DATA_DIR other users can write (mode %o), touching nothing',
    async (mode) => {
      const dataDir = path.join(root, `open-${mode.toString(8)}`);
      mkdirSync(dataDir);
      chmodSync(dataDir, mode);
      const start = startService(config(dataDir), {
        logDestination: new Writable({ write: (_c, _e, cb) => cb() }),
      });
      await expect(start).rejects.toBeInstanceOf(DataDirExposed);
      await expect(start).rejects.toThrow(`can be written by other users (mode 0${mode.toString(8)})`);
      expect(readdirSync(dataDir)).toEqual([]);
      expect(statSync(dataDir).mode & 0o777).toBe(mode);
    },
  );
});

import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openAsBlob,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { configuredKeyId } from '../auth/signing-keys.ts';
import type { Config } from '../config.ts';
import { BackupUnreadable, readArchive } from '../platform/backup/archive-read.ts';
import {
  DATABASE,
  FORMAT,
  MANIFEST,
  type Manifest,
  placeOf,
  STORAGE_PARTS,
  VERSION,
} from '../platform/backup/layout.ts';
import { type DataDirLock, DataDirLocked, LOCK_FILE, lockDataDir } from '../platform/data-dir-lock.ts';
import { openPglite } from '../platform/db/pglite.ts';
import { makePrivate, tightenTree } from '../platform/private-dir.ts';
import { secretsWithKey } from '../platform/secrets.ts';
import { ON_POSTGRES } from './backup.ts';

/** A restore that must not go ahead; the message says why and what to do. */
class Refused extends Error {}

const MANIFEST_MAX = 16 * 1024 * 1024;

/**
 * `svc restore <file>`: a backup of `svc backup` into an empty DATA_DIR (and STORAGE_DIR), under
 * the data directory's lock, so never beside a running service. Everything is unpacked into a
 * folder beside, checked (the manifest's sizes and SHA-256s, the keys against the ones this
 * process would run with, the database opened and read) and only then moved into place; a
 * damaged file or a refusal leaves DATA_DIR as empty as it was.
 */
export async function restoreCommand(config: Config, args: string[]): Promise<number> {
  if (args.length !== 1 || args[0]?.startsWith('-')) {
    process.stderr.write('usage: svc restore <file>\n');
    return 2;
  }
  if (config.databaseUrl) {
    process.stderr.write(`svc: ${ON_POSTGRES}\n`);
    return 1;
  }
  const file = path.resolve(args[0] as string);
  const { dataDir } = config;
  const storageDir = config.storage.dir;
  // The lock first, then the look inside: a service starting between the two cannot slip in.
  makePrivate(dataDir);
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir, 'restore');
  } catch (err) {
    if (!(err instanceof DataDirLocked)) throw err;
    process.stderr.write(
      `svc: a service runs on ${dataDir} (pid ${err.holder.pid}, svc ${err.holder.command}): restore goes into an empty DATA_DIR with no service on it\n`,
    );
    return 1;
  }
  const occupied = [
    ...contents(dataDir, [LOCK_FILE]),
    ...(inside(storageDir, dataDir) ? [] : contents(storageDir)),
  ];
  if (occupied.length) {
    lock.release();
    process.stderr.write(
      `svc: ${occupied[0]} exists: restore goes into an empty DATA_DIR (and STORAGE_DIR); choose a new one, or move this one aside\n`,
    );
    return 1;
  }

  const staging = mkdtempSync(path.join(dataDir, '.restore-'));
  // Storage is unpacked on its own filesystem, so that moving it into place is a rename.
  const storageInside = inside(storageDir, dataDir);
  if (!storageInside) makePrivate(storageDir, 'STORAGE_DIR');
  const storageStaging = storageInside
    ? path.join(staging, 'storage')
    : mkdtempSync(path.join(storageDir, '.restore-'));
  const moved: string[] = [];
  try {
    const manifest = await unpack(file, staging, storageStaging);
    await checkKeys(config, manifest);
    const database = path.join(staging, 'pglite');
    await checkDatabase(database, path.join(staging, DATABASE));

    // Everything is checked: into place.
    const put = (from: string, to: string) => {
      if (!existsSync(from)) return;
      mkdirSync(path.dirname(to), { recursive: true });
      renameSync(from, to);
      moved.push(to);
    };
    put(database, path.join(dataDir, 'pglite'));
    // No key files at all when both keys were configured (JWT_PRIVATE_KEY, SECRETS_KEY).
    for (const name of contents(path.join(staging, 'keys')))
      put(name, path.join(dataDir, path.basename(name)));
    for (const part of STORAGE_PARTS) put(path.join(storageStaging, part), path.join(storageDir, part));
    tightenTree(dataDir);
    const objects = manifest.entries.filter((e) => e.name.startsWith('storage/objects/')).length;
    if (objects && config.storage.s3)
      process.stderr.write(
        `svc: the backup's ${objects} files went to ${storageDir}, not to the S3 bucket STORAGE_URL names: copy them there with the store's own tools (docs/operations.md, "Object store")\n`,
      );
    process.stdout.write(`${JSON.stringify({ restored: file, created_at: manifest.created_at, objects })}\n`);
    return 0;
  } catch (err) {
    for (const p of moved.reverse()) rmSync(p, { recursive: true, force: true });
    if (err instanceof Refused || err instanceof BackupUnreadable) {
      process.stderr.write(
        `svc: ${file} was not restored, nothing was written to ${dataDir}: ${err.message}\n`,
      );
      return 1;
    }
    throw err;
  } finally {
    rmSync(staging, { recursive: true, force: true });
    if (!inside(storageStaging, staging)) rmSync(storageStaging, { recursive: true, force: true });
    lock.release();
  }
}

/** Unpacks every entry where it belongs under the staging folders; gives the checked manifest. */
async function unpack(file: string, staging: string, storageStaging: string): Promise<Manifest> {
  let manifestText: string | undefined;
  const seen = new Set<string>();
  const read = await readArchive(file, async (name, body) => {
    const place = placeOf(name);
    if (!place || seen.has(name))
      throw new BackupUnreadable(
        `${place ? 'a second' : 'an unexpected'} entry ${JSON.stringify(name)}: not a backup of svc backup`,
      );
    seen.add(name);
    if (place.kind === 'manifest') {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of body) {
        size += chunk.length;
        if (size > MANIFEST_MAX) throw new BackupUnreadable('the manifest is too large');
        chunks.push(chunk);
      }
      manifestText = Buffer.concat(chunks).toString('utf8');
      return;
    }
    const to =
      place.kind === 'database'
        ? path.join(staging, DATABASE)
        : place.kind === 'key'
          ? path.join(staging, 'keys', place.file)
          : path.join(storageStaging, place.relative);
    mkdirSync(path.dirname(to), { recursive: true });
    await pipeline(Readable.from(body), createWriteStream(to, { flags: 'wx', mode: 0o600 }));
  });

  if (manifestText === undefined)
    throw new BackupUnreadable(`no ${MANIFEST}: not a backup of svc backup, or one cut short`);
  if (read.at(-1)?.name !== MANIFEST) throw new BackupUnreadable(`${MANIFEST} is not the last entry`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(manifestText) as Manifest;
  } catch {
    throw new BackupUnreadable(`${MANIFEST} is not JSON`);
  }
  if (manifest.format !== FORMAT || manifest.version !== VERSION)
    throw new BackupUnreadable(
      `${MANIFEST} names format ${JSON.stringify(manifest.format)} version ${manifest.version}; this svc reads ${FORMAT} version ${VERSION}`,
    );
  const listed = new Map((manifest.entries ?? []).map((e) => [e.name, e]));
  const files = read.slice(0, -1);
  if (files.length !== listed.size) throw new BackupUnreadable('the entries differ from the manifest’s list');
  for (const e of files) {
    const want = listed.get(e.name);
    if (!want || want.size !== e.size || want.sha256 !== e.sha256)
      throw new BackupUnreadable(`${e.name} differs from what the manifest recorded (damaged)`);
  }
  if (!listed.has(DATABASE)) throw new BackupUnreadable(`no ${DATABASE} in the backup`);
  return manifest;
}

/**
 * The restored service must sign and open with the backup's keys: old tokens verify, sealed
 * tokens open. A key kept outside the backup (JWT_PRIVATE_KEY, SECRETS_KEY) must be configured
 * here, and the same; a configured one would otherwise win over the file restored beside it.
 */
async function checkKeys(config: Config, m: Manifest) {
  const kid = config.jwtPrivateKey ? await configuredKeyId(config.jwtPrivateKey) : null;
  if (kid ? kid !== m.signing_key.kid : !m.signing_key.in_backup)
    throw new Refused(
      kid
        ? `JWT_PRIVATE_KEY here is key ${kid}, the backup's tokens were signed with key ${m.signing_key.kid}: set the backup's key, or unset JWT_PRIVATE_KEY if the backup holds it (${m.signing_key.in_backup ? 'it does' : 'it does not'})`
        : `the backup was taken with JWT_PRIVATE_KEY set (key ${m.signing_key.kid}), which it does not hold: set the same JWT_PRIVATE_KEY and restore again`,
    );
  const secretsId = config.secretsKey ? secretsWithKey(config.secretsKey).keyId : null;
  if (secretsId ? secretsId !== m.secrets_key.id : !m.secrets_key.in_backup)
    throw new Refused(
      secretsId
        ? `SECRETS_KEY here is key ${secretsId}, the backup's secrets were sealed with key ${m.secrets_key.id}: set the backup's key, or unset SECRETS_KEY if the backup holds it (${m.secrets_key.in_backup ? 'it does' : 'it does not'})`
        : `the backup was taken with SECRETS_KEY set (key ${m.secrets_key.id}), which it does not hold: set the same SECRETS_KEY and restore again`,
    );
}

/** Unpacks the database with PGlite itself and reads it: a dump that does not open is refused. */
async function checkDatabase(dir: string, dump: string) {
  let db: Awaited<ReturnType<typeof openPglite>>;
  try {
    db = await openPglite(dir, await openAsBlob(dump));
  } catch (err) {
    throw new BackupUnreadable(`the database in the backup does not open: ${(err as Error).message}`);
  }
  try {
    await db.query('select count(*) from svc_meta.migrations');
  } catch (err) {
    throw new BackupUnreadable(`the database in the backup cannot be read: ${(err as Error).message}`);
  } finally {
    await db.close();
  }
  rmSync(dump, { force: true });
}

/** What a folder holds (an absent one: nothing), leaving out `ignore`. */
function contents(dir: string, ignore: string[] = []): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => !ignore.includes(n))
      .map((n) => path.join(dir, n));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

const inside = (child: string, parent: string) => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

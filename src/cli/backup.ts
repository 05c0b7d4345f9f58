import { type Dirent, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { configuredKeyId, loadSigningKeys } from '../auth/signing-keys.ts';
import type { Config } from '../config.ts';
import { type ArchiveWriter, writeArchive } from '../platform/backup/archive-write.ts';
import { dumpDatabase, dumpPath } from '../platform/backup/database-dump.ts';
import {
  DATABASE,
  FORMAT,
  KEY_FILES,
  MANIFEST,
  type Manifest,
  STORAGE_PARTS,
  VERSION,
} from '../platform/backup/layout.ts';
import { loadSecrets, SECRETS_KEY_FILE } from '../platform/secrets.ts';
import { isConnectionRefused, openForCommand, runningServiceUrl } from './running-service.ts';

export const ON_POSTGRES =
  'svc backup and svc restore are for the embedded database (DATA_DIR). On PostgreSQL, back up with ' +
  'pg_dump and keep JWT_PRIVATE_KEY, SECRETS_KEY and the social-media bucket beside the dump: ' +
  'see docs/operations.md, "Backups".';

/**
 * `svc backup <file>`: the embedded database, the signing and secrets keys and the bucket's files
 * in one gzip'd tar (src/platform/backup/layout.ts), mode 0600, whole or not at all. While the
 * service runs, it is asked to dump its database (only it may open it: functions/database-dump.ts,
 * with the service-role key, as `svc org set-plan` asks it); otherwise this command opens the
 * database itself under the data directory's lock. The files are read from disk here. Prints
 * `{"file", "bytes"…}` as one JSON line.
 */
export async function backupCommand(config: Config, args: string[]): Promise<number> {
  if (args.length !== 1 || args[0]?.startsWith('-')) {
    process.stderr.write('usage: svc backup <file>\n');
    return 2;
  }
  if (config.databaseUrl) {
    process.stderr.write(`svc: ${ON_POSTGRES}\n`);
    return 1;
  }
  const target = path.resolve(args[0] as string);
  // Before the dump, which costs the service a pause: a target that cannot be written is known now.
  if (!existsSync(path.dirname(target))) {
    process.stderr.write(
      `svc: ${path.dirname(target)} does not exist: make it first (the backup goes in it)\n`,
    );
    return 1;
  }
  const dump = await dumpOnce(config);
  try {
    const manifest = await keysManifest(config);
    let objects = 0;
    await writeArchive(target, async (w) => {
      await w.addFile(DATABASE, dump);
      for (const file of KEY_FILES) {
        const source = path.join(config.dataDir, file);
        if (existsSync(source)) await w.addFile(`keys/${file}`, source);
      }
      // A bucket on S3 is backed up with the store's own tools, not read into this file.
      if (!config.storage.s3) objects = await addStorage(w, config.storage.dir);
      const full: Manifest = { ...manifest, entries: [...w.entries] };
      await w.addBytes(MANIFEST, Buffer.from(`${JSON.stringify(full, null, 2)}\n`));
    });
    const notes = [
      ...(config.storage.s3
        ? [
            `the social-media bucket is on S3 (STORAGE_URL, bucket ${config.storage.s3.bucket}): its files are not in the backup; back the bucket up with the store's own tools (docs/operations.md, "Object store")`,
          ]
        : []),
      ...(manifest.signing_key.in_backup
        ? []
        : ['JWT_PRIVATE_KEY is set, so it is not in the backup: keep it beside it']),
      ...(manifest.secrets_key.in_backup
        ? []
        : ['SECRETS_KEY is set, so it is not in the backup: keep it beside it']),
    ];
    for (const n of notes) process.stderr.write(`svc: ${n}\n`);
    process.stdout.write(
      `${JSON.stringify({ file: target, database: 'pglite', objects, ...(config.storage.s3 ? { objects_skipped: 's3' } : {}) })}\n`,
    );
    return 0;
  } finally {
    rmSync(dump, { force: true });
  }
}

/** The path of a fresh dump: made by the running service, or here when none runs. */
async function dumpOnce(config: Config): Promise<string> {
  const url = runningServiceUrl(config);
  if (url) {
    const keys = await loadSigningKeys(config.dataDir, config.jwtPrivateKey);
    try {
      const res = await fetch(`${url}/functions/v1/database-dump`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys.serviceRoleKey}` },
      });
      const body = (await res.json()) as { file?: string; message?: string };
      if (!res.ok)
        throw new Error(`the service at ${url} did not dump its database: ${body.message ?? res.status}`);
      const file = dumpPath(config.dataDir, String(body.file));
      if (!file) throw new Error(`the service at ${url} answered an unexpected dump name`);
      return file;
    } catch (err) {
      // It stopped between our look and our call: the database is free to open here.
      if (!isConnectionRefused(err)) throw err;
    }
  }
  const db = await openForCommand(config, 'backup');
  try {
    const name = await dumpDatabase(db, config.dataDir);
    return dumpPath(config.dataDir, name) as string;
  } finally {
    await db.close();
  }
}

/** The keys' ids: a restore checks them against the keys it will run with. */
async function keysManifest(config: Config): Promise<Omit<Manifest, 'entries'>> {
  let kid: string;
  if (config.jwtPrivateKey) kid = await configuredKeyId(config.jwtPrivateKey);
  else {
    const file = path.join(config.dataDir, 'keys.json');
    if (!existsSync(file)) throw new Error(`${file} is missing: is DATA_DIR the service's data directory?`);
    kid = (JSON.parse(readFileSync(file, 'utf8')) as { kid: string }).kid;
  }
  const secretsFile = path.join(config.dataDir, SECRETS_KEY_FILE);
  if (!config.secretsKey && !existsSync(secretsFile))
    throw new Error(`${secretsFile} is missing: is DATA_DIR the service's data directory?`);
  return {
    format: FORMAT,
    version: VERSION,
    created_at: new Date().toISOString(),
    engine: 'pglite',
    signing_key: { kid, in_backup: !config.jwtPrivateKey },
    secrets_key: { id: loadSecrets(config.dataDir, config.secretsKey).keyId, in_backup: !config.secretsKey },
  };
}

/** The bucket's objects and their type sidecars (not tmp/: uploads in progress). */
async function addStorage(w: ArchiveWriter, storageDir: string): Promise<number> {
  let objects = 0;
  for (const part of STORAGE_PARTS) {
    for (const relative of filesUnder(path.join(storageDir, part))) {
      try {
        await w.addFile(`storage/${part}/${relative}`, path.join(storageDir, part, relative));
      } catch (err) {
        // Removed since it was listed (nothing of it was written yet): not in the backup.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      if (part === 'objects') objects++;
    }
  }
  return objects;
}

function filesUnder(dir: string, prefix = ''): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return entries
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => {
      const rel = prefix ? `${prefix}/${e.name}` : e.name;
      if (e.isDirectory()) return filesUnder(path.join(dir, e.name), rel);
      return e.isFile() ? [rel] : [];
    });
}

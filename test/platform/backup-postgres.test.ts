// The PostgreSQL backup of docs/operations.md ("Backups that can be restored"), run as written:
// pg_dump of a tenant with contacts, an order, a connected account and a stored file; pg_restore
// into a new database, the bucket unpacked into a new STORAGE_DIR, and a service started there
// with the same JWT_PRIVATE_KEY and SECRETS_KEY and an empty DATA_DIR: the old token verifies,
// the sealed access token opens, the file downloads, the rows are there.
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { accountById } from '../../src/domain/connected-accounts.ts';
import { startService } from '../../src/main.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { startFakeGraph } from '../fakes/graph/index.ts';
import { png } from '../fakes/media/samples.ts';
import { freshDatabase, onPostgres } from '../helpers/db.ts';
import { call, orgOf, signUp } from '../helpers/http.ts';
import { connect } from '../helpers/send.ts';
import type { TestService } from '../helpers/service.ts';
import { adminUrl, databaseUrl } from '../helpers/urls.ts';

const PAGE = `10${process.pid}08`;
const PAGE_TOKEN = 'EAAG-page-token-kept-by-pg-dump';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function tempDir(tag: string) {
  const dir = mkdtempSync(path.join(tmpdir(), `svc-pgbackup-${tag}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const asTarget = (url: string, anonKey: string) => ({ url, anonKey }) as unknown as TestService;

describe.skipIf(!onPostgres())('a PostgreSQL backup made as docs/operations.md says', () => {
  it('restores into a new database with the same keys: tokens verify, the sealed token opens, the file and rows are there', async () => {
    const graph = await startFakeGraph({ accounts: { [PAGE]: { token: PAGE_TOKEN, channel: 'messenger' } } });
    cleanups.push(() => graph.close());
    const source = await freshDatabase();
    cleanups.push(() => source.drop());
    // The production shape: keys from the environment, not from DATA_DIR.
    const keys = {
      JWT_PRIVATE_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
      SECRETS_KEY: randomBytes(32).toString('base64'),
    };
    const base = { PORT: '0', LOG_LEVEL: 'silent', META_GRAPH_URL: graph.url, ...keys };
    const storageDir = tempDir('storage');
    const first = await startService(
      loadConfig({
        ...base,
        DATABASE_URL: source.url as string,
        DATA_DIR: tempDir('data'),
        STORAGE_DIR: storageDir,
      }),
    );
    const svc = asTarget(first.url, first.services.keys.anonKey);
    const owner = await signUp(svc, 'Dumped Deli');
    const org = orgOf(owner);
    await first.services.db.query("update organizations set plan = 'starter' where id = $1", [org]);
    const contact = await call(svc, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      body: { first_name: 'Ada' },
    });
    expect(contact.status).toBe(201);
    const order = await call(svc, 'POST', '/functions/v1/orders', {
      token: owner.access_token,
      body: { address: '1 Main St', phone_number: '+14155550100', items: [{ name: 'Pickles', quantity: 3 }] },
    });
    expect(order.status).toBe(201);
    const accountId = (await connect(svc, owner, 'facebook', PAGE, PAGE_TOKEN)).id;
    const picture = png(200, 100, 3000);
    const picturePath = `${org}/drafts/jar.png`;
    const upload = await fetch(`${svc.url}/storage/v1/object/social-media/${picturePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.access_token}`, 'content-type': 'image/png' },
      body: picture,
    });
    expect(upload.status).toBe(200);

    // Backed up as the operations page says, while the service runs.
    const backups = tempDir('backups');
    const dump = path.join(backups, 'svc.dump');
    execFileSync('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, source.url as string]);
    const bucket = path.join(backups, 'svc-storage.tar.gz');
    execFileSync('tar', ['czf', bucket, '-C', storageDir, 'objects', 'meta']);
    await first.close();

    // Restored into a new database and a new STORAGE_DIR.
    const server = process.env.TEST_DATABASE_URL as string;
    const name = `svc_restored_${randomBytes(4).toString('hex')}`;
    const admin = openPostgres(adminUrl(server), 1);
    await admin.query(`create database ${name}`);
    cleanups.push(async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.close();
    });
    const restoredUrl = databaseUrl(server, name);
    execFileSync('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restoredUrl}`, dump]);
    const restoredStorage = tempDir('storage-restored');
    mkdirSync(restoredStorage, { recursive: true });
    execFileSync('tar', ['xzf', bucket, '-C', restoredStorage]);

    const second = await startService(
      loadConfig({
        ...base,
        DATABASE_URL: restoredUrl,
        DATA_DIR: tempDir('data'),
        STORAGE_DIR: restoredStorage,
      }),
    );
    cleanups.push(() => second.close());
    const again = asTarget(second.url, second.services.keys.anonKey);
    const me = await call(again, 'GET', '/auth/v1/user', { token: owner.access_token });
    expect(me.status).toBe(200);
    expect(me.json.id).toBe(owner.user.id);
    const contacts = await call(again, 'GET', '/rest/v1/contacts?select=first_name', {
      token: owner.access_token,
    });
    expect(contacts.json).toEqual([{ first_name: 'Ada' }]);
    const orders = await call(again, 'GET', '/rest/v1/orders?select=order_number', {
      token: owner.access_token,
    });
    expect(orders.json).toEqual([{ order_number: order.json.order_number }]);
    const download = await fetch(`${again.url}/storage/v1/object/social-media/${picturePath}`, {
      headers: { authorization: `Bearer ${owner.access_token}` },
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(picture))).toBe(true);
    const account = await accountById(second.services, org, accountId);
    expect(account?.access_token).toBe(PAGE_TOKEN);
  }, 300_000);
});

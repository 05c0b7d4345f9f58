// `svc backup` / `svc restore` (docs/operations.md, "Backups"): a tenant's rows, its people's
// tokens, its connected account's sealed token and its stored files survive a backup taken while
// the service runs and a restore into a fresh DATA_DIR; a damaged file, a DATA_DIR in use or not
// empty, and PostgreSQL are refused with a message that says why, and leave nothing behind.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountById } from '../../src/domain/connected-accounts.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { loadSecrets } from '../../src/platform/secrets.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph/index.ts';
import { png } from '../fakes/media/samples.ts';
import { exited, runCli, startCli } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/db.ts';
import { call, orgOf, type Session, signUp } from '../helpers/http.ts';
import { connect } from '../helpers/send.ts';
import type { TestService } from '../helpers/service.ts';

const PAGE = `10${process.pid}07`;
const PAGE_TOKEN = 'EAAG-page-token-kept-by-backups';
const GUARD = 300_000; // against a hang only: several processes start in each test

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function tempDir(tag: string) {
  const dir = mkdtempSync(path.join(tmpdir(), `svc-backup-${tag}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

type Running = { child: ChildProcess; target: TestService };

async function start(env: Record<string, string>): Promise<Running> {
  const { child, url, output } = await startCli({ PORT: '0', LOG_LEVEL: 'silent', ...env });
  const anonKey = /anon key: (\S+)/.exec(output())?.[1] as string;
  const running = { child, target: { url, anonKey } as unknown as TestService };
  cleanups.push(() => stop(running));
  return running;
}

async function stop({ child }: Running) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await exited(child);
}

const emptyOrAbsent = (dir: string) => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};

describe.skipIf(onPostgres())('svc backup and svc restore on the embedded database', () => {
  let graph: FakeGraph;
  let env: Record<string, string>;
  let dataDir: string;
  let service: Running;
  let owner: Session;
  let org: string;
  let accountId: string;
  let orderNumber: string;
  const picture = png(320, 240, 4096);
  let picturePath: string;

  beforeAll(async () => {
    graph = await startFakeGraph({ accounts: { [PAGE]: { token: PAGE_TOKEN, channel: 'messenger' } } });
    cleanups.push(() => graph.close());
    env = { META_GRAPH_URL: graph.url, META_INSTAGRAM_GRAPH_URL: graph.url };
    dataDir = tempDir('source');
    service = await start({ ...env, DATA_DIR: dataDir });
    const svc = service.target;
    owner = await signUp(svc, 'Kept Bakery');
    org = orgOf(owner);
    const plan = await runCli(['org', 'set-plan', org, 'starter'], {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
    });
    expect(plan.code, plan.stderr).toBe(0);
    for (const first_name of ['Ada', 'Grace']) {
      const r = await call(svc, 'POST', '/rest/v1/contacts', {
        token: owner.access_token,
        body: { first_name },
      });
      expect(r.status).toBe(201);
    }
    const order = await call(svc, 'POST', '/functions/v1/orders', {
      token: owner.access_token,
      body: {
        address: '1 Main St',
        phone_number: '+14155550100',
        items: [{ name: 'Rye loaf', quantity: 2 }],
      },
    });
    expect(order.status, JSON.stringify(order.json)).toBe(201);
    orderNumber = order.json.order_number;
    accountId = (await connect(svc, owner, 'facebook', PAGE, PAGE_TOKEN)).id;
    picturePath = `${org}/drafts/loaf.png`;
    const upload = await fetch(`${svc.url}/storage/v1/object/social-media/${picturePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.access_token}`, 'content-type': 'image/png' },
      body: picture,
    });
    expect(upload.status).toBe(200);
  }, GUARD);

  it(
    'a backup taken while the service runs restores into a fresh DATA_DIR: tokens verify, the sealed token opens, the file and rows are there',
    async () => {
      const file = path.join(tempDir('file'), 'svc.backup.tar.gz');
      const backup = await runCli(['backup', file], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
      expect(backup.code, backup.stderr).toBe(0);
      expect(JSON.parse(backup.stdout)).toMatchObject({ file, objects: 1 });
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // The service kept running and serving throughout; its dump was taken away, not left behind.
      const during = await call(service.target, 'GET', '/auth/v1/user', { token: owner.access_token });
      expect(during.status).toBe(200);
      expect(readdirSync(path.join(dataDir, 'backup-dumps'))).toEqual([]);
      // Only the operator may have the service dump its database.
      const asOwner = await call(service.target, 'POST', '/functions/v1/database-dump', {
        token: owner.access_token,
      });
      expect(asOwner.status).toBe(403);

      const restored = tempDir('restored');
      const restore = await runCli(['restore', file], { DATA_DIR: restored, LOG_LEVEL: 'silent' });
      expect(restore.code, restore.stderr).toBe(0);
      const again = await start({ ...env, DATA_DIR: restored });
      const svc = again.target;
      expect(svc.anonKey).toBe(service.target.anonKey);

      const me = await call(svc, 'GET', '/auth/v1/user', { token: owner.access_token });
      expect(me.status).toBe(200);
      expect(me.json.id).toBe(owner.user.id);
      const contacts = await call(svc, 'GET', '/rest/v1/contacts?select=first_name&order=first_name', {
        token: owner.access_token,
      });
      expect(contacts.json).toEqual([{ first_name: 'Ada' }, { first_name: 'Grace' }]);
      const orders = await call(svc, 'GET', '/rest/v1/orders?select=order_number', {
        token: owner.access_token,
      });
      expect(orders.json).toEqual([{ order_number: orderNumber }]);
      const download = await fetch(`${svc.url}/storage/v1/object/social-media/${picturePath}`, {
        headers: { authorization: `Bearer ${owner.access_token}` },
      });
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(picture))).toBe(true);
      await stop(again);

      // The connected account's access token, sealed with the secrets key, opens with the restored key.
      const db = await openPglite(path.join(restored, 'pglite'));
      try {
        const account = await accountById({ db, secrets: loadSecrets(restored) }, org, accountId);
        expect(account?.access_token).toBe(PAGE_TOKEN);
      } finally {
        await db.close();
      }
    },
    GUARD,
  );

  it(
    'a backup taken with no service running is made by the command itself and restores',
    async () => {
      const dir = tempDir('stopped');
      const first = await start({ ...env, DATA_DIR: dir });
      const someone = await signUp(first.target, 'Quiet Shop');
      await stop(first);
      const file = path.join(tempDir('file'), 'stopped.tgz');
      const backup = await runCli(['backup', file], { DATA_DIR: dir, LOG_LEVEL: 'silent' });
      expect(backup.code, backup.stderr).toBe(0);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const restored = tempDir('restored');
      const restore = await runCli(['restore', file], { DATA_DIR: restored, LOG_LEVEL: 'silent' });
      expect(restore.code, restore.stderr).toBe(0);
      const again = await start({ ...env, DATA_DIR: restored });
      const me = await call(again.target, 'GET', '/auth/v1/user', { token: someone.access_token });
      expect(me.json.id).toBe(someone.user.id);
    },
    GUARD,
  );

  it(
    'a restore is refused into a DATA_DIR that is not empty, where a service runs, or with another secrets key, and changes nothing there',
    async () => {
      const file = path.join(tempDir('file'), 'b.tgz');
      expect((await runCli(['backup', file], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' })).code).toBe(0);

      const running = await runCli(['restore', file], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
      expect(running.code).toBe(1);
      expect(running.stderr).toMatch(/a service runs on .* restore goes into an empty DATA_DIR/);

      const used = tempDir('used');
      writeFileSync(path.join(used, 'notes.txt'), 'mine');
      const refused = await runCli(['restore', file], { DATA_DIR: used, LOG_LEVEL: 'silent' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/notes\.txt exists: restore goes into an empty DATA_DIR/);
      expect(readdirSync(used)).toEqual(['notes.txt']);

      // Another secrets key would leave every sealed token unopenable: refused, naming both keys.
      const fresh = tempDir('other-key');
      const otherKey = await runCli(['restore', file], {
        DATA_DIR: fresh,
        LOG_LEVEL: 'silent',
        SECRETS_KEY: randomBytes(32).toString('base64'),
      });
      expect(otherKey.code).toBe(1);
      expect(otherKey.stderr).toMatch(
        /SECRETS_KEY here is key \w{8}, the backup's secrets were sealed with key \w{8}/,
      );
      expect(emptyOrAbsent(fresh)).toEqual([]);
    },
    GUARD,
  );

  it(
    'with the bucket on S3, backs up the rest and says the files are for the store’s own tools',
    async () => {
      const file = path.join(tempDir('file'), 's3.tgz');
      const backup = await runCli(['backup', file], {
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
        // Never contacted: the command does not read the bucket.
        STORAGE_URL: 's3://svc-media?endpoint=http://127.0.0.1:1&region=us-east-1',
      });
      expect(backup.code, backup.stderr).toBe(0);
      expect(JSON.parse(backup.stdout)).toMatchObject({ file, objects: 0, objects_skipped: 's3' });
      expect(backup.stderr).toMatch(/bucket is on S3 .*svc-media.*not in the backup.*store's own tools/);
    },
    GUARD,
  );

  it(
    'a truncated, damaged or foreign file is refused with a clear message, and nothing is restored',
    async () => {
      const dir = tempDir('file');
      const file = path.join(dir, 'b.tgz');
      expect((await runCli(['backup', file], { DATA_DIR: dataDir, LOG_LEVEL: 'silent' })).code).toBe(0);
      const whole = readFileSync(file);
      const cases: [string, Buffer, RegExp][] = [
        [
          'cut.tgz',
          whole.subarray(0, Math.floor(whole.length / 2)),
          /not a whole gzip file \(damaged or cut short\)/,
        ],
        [
          'flipped.tgz',
          Buffer.from(whole.map((b, i) => (i === Math.floor(whole.length / 3) ? b ^ 0xff : b))),
          /damaged|not a whole gzip|not a well-formed tar/,
        ],
        [
          'foreign.tgz',
          gzipSync(Buffer.from('just some text, not a backup\n'.repeat(100))),
          /not a well-formed tar/,
        ],
      ];
      for (const [name, bytes, message] of cases) {
        writeFileSync(path.join(dir, name), bytes);
        const target = tempDir('target');
        const r = await runCli(['restore', path.join(dir, name)], { DATA_DIR: target, LOG_LEVEL: 'silent' });
        expect(r.code, name).toBe(1);
        expect(r.stderr, name).toMatch(/was not restored, nothing was written to/);
        expect(r.stderr, name).toMatch(message);
        expect(emptyOrAbsent(target), name).toEqual([]);
      }
    },
    GUARD,
  );
});

describe('svc backup and svc restore on PostgreSQL', () => {
  it('are refused with the way to back PostgreSQL up, and write nothing', async () => {
    const dir = tempDir('pg');
    const file = path.join(dir, 'b.tgz');
    // The commands refuse before connecting: any PostgreSQL URL shows it.
    const env = { DATA_DIR: dir, LOG_LEVEL: 'silent', DATABASE_URL: 'postgres://svc@127.0.0.1:1/svc' };
    for (const command of ['backup', 'restore']) {
      const r = await runCli([command, file], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/pg_dump/);
      expect(r.stderr).toMatch(/JWT_PRIVATE_KEY, SECRETS_KEY and the social-media bucket/);
      expect(r.stderr).toMatch(/docs\/operations\.md, "Backups"/);
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});

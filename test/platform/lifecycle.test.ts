import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/main.ts';
import { loadMigrations, MIGRATIONS_DIR, MigrationError, migrate } from '../../src/platform/db/migrate.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { openPglite } from '../../src/platform/db/pglite.ts';
import { runCli, startCli, tryStartCli } from '../helpers/cli.ts';
import { freshDatabase, onPostgres } from '../helpers/db.ts';
import { call, signIn, signUp } from '../helpers/http.ts';
import type { TestService } from '../helpers/service.ts';
import { databaseUrl } from '../helpers/urls.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function tempDir() {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-life-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The environment of a real deployment: PGlite in DATA_DIR, or a private PostgreSQL database. */
async function deploymentEnv(dataDir: string): Promise<Record<string, string>> {
  if (!onPostgres()) return { DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  const fresh = await freshDatabase();
  await fresh.db.close();
  cleanups.push(() => fresh.drop());
  return { DATA_DIR: dataDir, LOG_LEVEL: 'silent', DATABASE_URL: fresh.url as string };
}

// The few fields the HTTP helpers read from a service.
const asTarget = (url: string, anonKey: string) => ({ url, anonKey }) as unknown as TestService;

describe('restart on the same data dir', () => {
  it('keeps users, signing key and API keys', async () => {
    const dir = tempDir();
    const env = { ...(await deploymentEnv(dir)), PORT: '0' };
    const first = await startService(loadConfig(env));
    const anon = first.services.keys.anonKey;
    const kid = first.services.keys.kid;
    const session = await signUp(asTarget(first.url, anon), 'Persistent Ltd');
    await first.close();

    const second = await startService(loadConfig(env));
    try {
      expect(second.services.keys.anonKey).toBe(anon);
      expect(second.services.keys.kid).toBe(kid);
      const again = await signIn(asTarget(second.url, anon), session.user.email);
      expect(again.user.id).toBe(session.user.id);
      // A token issued before the restart still verifies.
      const me = await call(asTarget(second.url, anon), 'GET', '/auth/v1/user', {
        token: session.access_token,
      });
      expect(me.status).toBe(200);
    } finally {
      await second.close();
    }
  });
});

describe('migrations', () => {
  it('apply once when two processes start together', async () => {
    if (onPostgres()) {
      const server = process.env.TEST_DATABASE_URL as string;
      const name = `svc_mig_${Date.now()}`;
      const admin = openPostgres(server, 1);
      await admin.query(`create database ${name}`);
      cleanups.push(async () => {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.close();
      });
      const [a, b] = [openPostgres(databaseUrl(server, name), 2), openPostgres(databaseUrl(server, name), 2)];
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      expect([...ra, ...rb].sort()).toEqual(loadMigrations().map((m) => m.name));
      const rows = await a.query<{ n: number }>('select count(*)::int as n from svc_meta.migrations');
      expect(rows[0]?.n).toBe(loadMigrations().length);
      await Promise.all([a.close(), b.close()]);
    } else {
      const db = await openPglite(undefined);
      const [ra, rb] = await Promise.all([migrate(db), migrate(db)]);
      expect([...ra, ...rb].sort()).toEqual(loadMigrations().map((m) => m.name));
      await db.close();
    }
  });

  it('refuse to run when an applied migration was edited', async () => {
    const dir = tempDir();
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const fresh = await freshDatabase(); // already migrated from the same files
    cleanups.push(() => fresh.drop());
    expect(await migrate(fresh.db, loadMigrations(dir))).toEqual([]);
    const first = path.join(dir, '0001_roles_and_schemas.sql');
    writeFileSync(first, `${readFileSync(first, 'utf8')}\n-- edited\n`);
    await expect(migrate(fresh.db, loadMigrations(dir))).rejects.toBeInstanceOf(MigrationError);
  });
});

describe('the svc command', () => {
  it('starts, prints its URL and anon key, agrees with `svc keys`, and stops cleanly on SIGTERM', async () => {
    const dir = tempDir();
    const env = { ...(await deploymentEnv(dir)), PORT: '0' };
    const { child, url, output } = await startCli(env);
    const keys = await runCli(['keys'], env);
    expect(keys.code).toBe(0);
    const printed = JSON.parse(keys.stdout.trim());
    expect(Object.keys(printed).sort()).toEqual(['anon_key', 'service_role_key', 'url']);
    // The running service's address (PORT=0 picked a free port), not the default port's. With
    // DATABASE_URL there is no lock file to find it in: the configured address is printed.
    if (!onPostgres()) expect(printed.url).toBe(url);
    expect(output()).toContain(`anon key: ${printed.anon_key}`);
    expect((await fetch(`${url}/health`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });

  it('`svc org set-plan` changes the plan through the running service', async () => {
    const dir = tempDir();
    const env = { ...(await deploymentEnv(dir)), PORT: '0' };
    const service = await startService(loadConfig(env));
    cleanups.push(() => service.close());
    const owner = await signUp(asTarget(service.url, service.services.keys.anonKey), 'Plan Change Co');
    const orgId = JSON.parse(Buffer.from(owner.access_token.split('.')[1] as string, 'base64url').toString())
      .app_metadata.organization_id;
    const cliEnv = { ...env, PUBLIC_URL: service.url };

    const ok = await runCli(['org', 'set-plan', orgId, 'starter'], cliEnv);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).plan_limits.mcp_scopes).toEqual(['read', 'write']);
    const bad = await runCli(['org', 'set-plan', orgId, 'platinum'], cliEnv);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr).error).toBe('validation_error');
    const usage = await runCli(['org', 'set-plan'], cliEnv);
    expect(usage.code).toBe(2);
  });

  it('`svc migrate` applies pending migrations and then has nothing to do', async () => {
    const dir = tempDir();
    const env = await deploymentEnv(dir);
    const first = await runCli(['migrate'], env);
    expect(first.code).toBe(0);
    // On PostgreSQL the fresh database is a copy of the migrated template already.
    expect(first.stdout).toMatch(onPostgres() ? /nothing to apply/ : /applied: 0001_roles_and_schemas\.sql/);
    expect((await runCli(['migrate'], env)).stdout).toMatch(/nothing to apply/);
  });

  it('refuses invalid configuration with a clear message', async () => {
    const r = await runCli(['keys'], { PORT: 'not-a-port', DATA_DIR: tempDir() });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/PORT/);
  });
});

describe('one process per embedded data directory', () => {
  it.skipIf(onPostgres())(
    'refuses a second `svc start` and `svc migrate` naming the running one, and frees the directory on stop',
    async () => {
      const env = { DATA_DIR: tempDir(), LOG_LEVEL: 'silent', PORT: '0' };
      const first = await startCli(env);
      const pid = String(first.child.pid);
      const second = await tryStartCli(env);
      expect(second.listening).toBeNull();
      expect(second.code).toBe(1);
      expect(second.output).toContain(`pid ${pid}`);
      expect(second.output).toContain(first.url);
      const migrate = await runCli(['migrate'], env);
      expect(migrate.code).toBe(1);
      expect(migrate.stderr).toContain(`pid ${pid}`);
      expect(migrate.stderr).toContain(first.url);
      // The first one is untouched: it still answers, and sign-ups made there stay.
      expect((await fetch(`${first.url}/health`)).status).toBe(200);

      const exited = new Promise((resolve) => first.child.on('exit', resolve));
      first.child.kill('SIGTERM');
      await exited;
      expect(existsSync(path.join(env.DATA_DIR, 'svc.lock'))).toBe(false);
      expect((await runCli(['migrate'], env)).code).toBe(0);
      const third = await tryStartCli(env);
      expect(third.listening).not.toBeNull();
      expect(third.code).toBe(0);
    },
  );

  it.skipIf(onPostgres())('takes over the lock of a process that died without releasing it', async () => {
    const dir = tempDir();
    const dead = spawnSync(process.execPath, ['-e', '']).pid as number;
    writeFileSync(
      path.join(dir, 'svc.lock'),
      JSON.stringify({
        pid: dead,
        host: hostname(),
        command: 'start',
        url: 'http://127.0.0.1:1',
        started_at: '',
        token: 'x',
      }),
    );
    const keys = await runCli(['keys'], { DATA_DIR: dir, LOG_LEVEL: 'silent', PORT: '7' });
    expect(JSON.parse(keys.stdout).url).toBe('http://127.0.0.1:7'); // a dead holder runs nothing
    const started = await tryStartCli({ DATA_DIR: dir, LOG_LEVEL: 'silent', PORT: '0' });
    expect(started.listening).not.toBeNull();
    expect(started.code).toBe(0);
  });

  it.runIf(onPostgres())(
    'lets several processes share one PostgreSQL database and data directory',
    async () => {
      const dir = tempDir();
      const env = { ...(await deploymentEnv(dir)), PORT: '0' };
      const first = await startCli(env);
      cleanups.push(() => {
        first.child.kill('SIGTERM');
      });
      const second = await tryStartCli(env);
      expect(second.listening).not.toBeNull();
      expect(second.code).toBe(0);
    },
  );
});

// A PostgreSQL server of a test's own, in a temporary directory, that the test may stop, start,
// restart and whose connections it may terminate, without touching the server every other test
// file shares. Made with the installed server's initdb and pg_ctl (PG_BINDIR, else the newest
// /usr/lib/postgresql/<version>/bin, else PATH); as root, they run as the `postgres` user, since
// PostgreSQL refuses to run as root.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export type Cluster = {
  /** A superuser's URL to the `postgres` database. */
  url: string;
  /** `pg_ctl stop`: fast (rolls back open transactions, ends connections) or immediate (a crash). */
  stop(mode?: 'fast' | 'immediate'): void;
  start(): void;
  restart(): void;
  /** `pg_terminate_backend` of every client connection but the caller's own; how many. */
  terminateAll(): Promise<number>;
  /** When the server last started: changes with every restart. */
  startedAt(): Promise<string>;
  destroy(): void;
};

function bindir(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions[0] ? path.join(root, versions[0], 'bin') : '';
}

const asRoot = process.getuid?.() === 0;

function run(bin: string, args: string[]) {
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${path.basename(bin)} ${args[0]} failed: ${r.stderr || r.stdout}`);
}

/** A TCP port nothing listens on now (for a process that must be given its port). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startCluster(): Promise<Cluster> {
  const bin = bindir();
  const tool = (name: string) => (bin ? path.join(bin, name) : name);
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-pg-'));
  if (asRoot) execFileSync('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  run(tool('initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  // Unix sockets in the test's own directory; durability is not what these tests are about.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const ctl = (...args: string[]) =>
    run(tool('pg_ctl'), [...args, '-D', data, '-w', '-l', path.join(dir, 'log'), '-o', options]);
  ctl('start');
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const one = async <T>(sql: string) => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    try {
      return (await client.query(sql)).rows[0] as T;
    } finally {
      await client.end();
    }
  };
  return {
    url,
    stop: (mode = 'fast') => ctl('stop', '-m', mode),
    start: () => ctl('start'),
    restart: () => ctl('restart', '-m', 'fast'),
    async terminateAll() {
      const row = await one<{ n: number }>(
        `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
          where backend_type = 'client backend' and pid <> pg_backend_pid()`,
      );
      return row.n;
    },
    startedAt: async () => (await one<{ t: string }>('select pg_postmaster_start_time()::text as t')).t,
    destroy() {
      try {
        ctl('stop', '-m', 'immediate');
      } catch {} // already stopped
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

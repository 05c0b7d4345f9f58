// What this file protects: with DATABASE_POOL_MODE=transaction the service sends no named
// prepared statement and leaves no session state behind (a pooler in transaction mode hands the
// next transaction to whichever server connection is free), while a REST read, an MCP call and a
// job all work; LISTEN goes past the pooler when DATABASE_DIRECT_URL is given, and without it the
// process acts as if a notice had been lost, at an interval. PostgreSQL only.
//
// The proof runs the service on ONE server connection opened past any pooler: everything it sent
// went through that session, whose pg_prepared_statements, settings, locks and LISTENs are then
// read. In the CI run behind PgBouncer (.ci/run) the same traffic also goes through the pooler.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { MakeJob } from '../../src/jobs/deps.ts';
import type { Database } from '../../src/platform/db/database.ts';
import { openDatabase } from '../../src/platform/db/open.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { openPostgresPooled } from '../../src/platform/db/pg-pooled.ts';
import { type FreshDatabase, freshDatabase, onPostgres } from '../helpers/db.ts';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, setPlan, tool } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { adminUrl, databaseUrl } from '../helpers/urls.ts';
import { until } from '../helpers/work-rows.ts';

const FAST = {
  WORKER_POLL_MS: '500',
  WORKER_SUPERVISE_SECONDS: '1',
  RATE_LIMIT_STANDARD_PER_MINUTE: '10000',
};

/** A job that records the data of each run. */
function recorder(name: string) {
  const seen: unknown[] = [];
  const make: MakeJob = () => ({
    name,
    policy: { attempts: 1, backoffSeconds: 1, maxBackoffSeconds: 1, maxAgeSeconds: 3600, leaseSeconds: 60 },
    async run(job) {
      seen.push(job.data);
      return { status: 'done' };
    },
  });
  return { name, make, seen };
}

/** A REST write and read, an MCP tool call and a job, as users would make them. */
async function exercise(svc: TestService, job: ReturnType<typeof recorder>, tag: string) {
  const owner: Session = await signUp(svc, `Pooled ${tag}`);
  const created = await call(svc, 'POST', '/rest/v1/contacts', {
    token: owner.access_token,
    body: { first_name: `Ada ${tag}` },
  });
  expect(created.status).toBe(201);
  const read = await call(svc, 'GET', `/rest/v1/contacts?select=first_name&first_name=eq.Ada%20${tag}`, {
    token: owner.access_token,
  });
  expect(read.status).toBe(200);
  expect(read.json).toEqual([{ first_name: `Ada ${tag}` }]);

  await setPlan(svc, owner, 'starter');
  const agent = await mcpClient(svc, (await agentToken(svc, owner, ['read'])).token);
  try {
    const listed = await tool(agent, 'svc_list_contacts', {});
    expect(listed.isError).toBe(false);
    expect(JSON.stringify(listed.body)).toContain(`Ada ${tag}`);
  } finally {
    await agent.close();
  }

  const { db, queue } = svc.services;
  await db.transaction((tx) => queue.enqueue(tx, job.name, { tag }));
  await until(() => job.seen.length > 0);
  expect(job.seen).toEqual([{ tag }]);
}

/** What one server session holds: named statements, settings, locks, LISTENs. */
async function sessionState(db: Database) {
  const [row] = await db.query<{
    pid: number;
    prepared: number;
    role: string;
    claims: string | null;
    locks: number;
    channels: number;
  }>(`select pg_backend_pid() as pid,
      (select count(*)::int from pg_prepared_statements) as prepared,
      current_setting('role') as role,
      nullif(current_setting('request.jwt.claims', true), '') as claims,
      (select count(*)::int from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()) as locks,
      (select count(*)::int from pg_listening_channels()) as channels`);
  if (!row) throw new Error('no row');
  return row;
}

describe.skipIf(!onPostgres())('behind a transaction-mode pooler', () => {
  let fresh: FreshDatabase;
  let direct: string;
  beforeAll(async () => {
    fresh = await freshDatabase();
    const name = new URL(fresh.url as string).pathname.slice(1);
    direct = databaseUrl(adminUrl(process.env.TEST_DATABASE_URL as string), name);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it('sends no named statement and leaves no session state, on one server connection', async () => {
    const job = recorder('pooled-single');
    const db = openPostgresPooled(direct, 1);
    const svc = await startTestService(FAST, { database: db, databaseUrl: direct, jobs: [job.make] });
    try {
      const before = await sessionState(db);
      await exercise(svc, job, 'one');
      const after = await sessionState(db);
      // Still the same server session: everything above went through it.
      expect(after.pid).toBe(before.pid);
      expect(after).toEqual({
        pid: before.pid,
        prepared: 0,
        role: 'none',
        claims: null,
        locks: 0,
        channels: 0,
      });
    } finally {
      await svc.stop();
    }
  });

  it('the probe does see session mode: its named statements stay on the connection', async () => {
    const db = openPostgres(direct, 1, 0);
    try {
      await db.query('select $1::int as n', [1], { prepare: true });
      expect((await sessionState(db)).prepared).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
  });

  it('serves a REST read, an MCP call and a job through the run database URL', async () => {
    // TEST_DATABASE_URL: PgBouncer in the CI run behind it, else the server itself.
    const job = recorder('pooled-run');
    const svc = await startTestService(FAST, {
      database: openPostgresPooled(fresh.url as string, 5, direct),
      databaseUrl: fresh.url,
      jobs: [job.make],
    });
    try {
      await exercise(svc, job, 'run');
    } finally {
      await svc.stop();
    }
  });

  it('hears a NOTIFY on DATABASE_DIRECT_URL, and without it acts as if one was lost', async () => {
    const heard: string[] = [];
    const withDirect = openPostgresPooled(fresh.url as string, 1, direct);
    const without = openPostgresPooled(fresh.url as string, 1, undefined, 50);
    const stops = [
      await withDirect.listen('svc_pooler_test', () => heard.push('direct')),
      await without.listen('svc_pooler_test', () => heard.push('unheard')),
    ];
    try {
      await withDirect.query(`notify svc_pooler_test`);
      await until(() => heard.includes('direct') && heard.includes('unheard'));
    } finally {
      for (const stop of stops) await stop();
      await Promise.all([withDirect.close(), without.close()]);
    }
  });

  it('is chosen by configuration: DATABASE_POOL_MODE=transaction opens without named statements', async () => {
    const db = await openDatabase(
      loadConfig({ DATABASE_URL: direct, DATABASE_POOL_MODE: 'transaction', DATABASE_POOL_SIZE: '1' }),
    );
    try {
      await db.query('select $1::int as n', [1], { prepare: true });
      expect((await sessionState(db)).prepared).toBe(0);
    } finally {
      await db.close();
    }
  });
});

// A typo in the mode is refused at start, like any other setting.
describe('DATABASE_POOL_MODE', () => {
  it('refuses a mode it does not know', () => {
    expect(() => loadConfig({ DATABASE_POOL_MODE: 'statement' })).toThrow(/DATABASE_POOL_MODE/);
  });
});

// Read-only db.queryAs batches share a few pipelining connections on PostgreSQL
// (src/platform/db/read-lanes.ts): callers' batches follow each other on one connection, each its
// own implicit transaction. PostgreSQL only: PGlite has one connection, and nothing to share.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Principal } from '../../src/platform/db/database.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { MAX_QUEUE } from '../../src/platform/db/read-lanes.ts';
import { type FreshDatabase, freshDatabase, onPostgres } from '../helpers/db.ts';
import { seedTenant, sqlstate, type Tenant, unique } from '../rls/fixtures.ts';

let fresh: FreshDatabase;
let a: Tenant;
let b: Tenant;
const opened: Database[] = [];
/** A database handle of its own, with `pool` pooled and `shared` shared read connections. */
const open = (pool: number, shared: number) => {
  const db = openPostgres(fresh.url as string, pool, shared);
  opened.push(db);
  return db;
};
/** Every read goes through the one shared connection. */
const oneLane = () => open(2, 1);

beforeAll(async () => {
  if (!onPostgres()) return;
  fresh = await freshDatabase();
  a = await seedTenant(fresh.db, 'lanes-a');
  b = await seedTenant(fresh.db, 'lanes-b');
  for (const [t, name] of [
    [a, 'Ann'],
    [b, 'Bob'],
  ] as const) {
    await fresh.db.query('insert into contacts (organization_id, first_name) values ($1, $2)', [
      t.orgId,
      name,
    ]);
  }
});
afterAll(async () => {
  await Promise.all(opened.map((db) => db.close()));
  await fresh?.drop();
});

/** A caller whose claims the claims statement refuses (its sub is not a uuid): 22P02. */
const refused = (t: Tenant): Principal => ({
  kind: 'user',
  userId: 'not-a-uuid',
  claims: { sub: 'not-a-uuid', role: 'authenticated', app_metadata: { organization_id: t.orgId } },
});

/** A statement text never sent before: the first batch to use it carries its Parse. */
const newCount = () => `select count(*)::int as n from contacts where first_name = $1 -- ${unique('lanes')}`;
const count = (db: Database, who: Principal, sql: string, name: string) =>
  db.queryAs<{ n: number }>(who, sql, [name], { readOnly: true });

/** The connections to the test's database, but the one asking. */
const backends = async () => {
  const [row] = await fresh.db.query<{ n: number }>(
    'select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  return (row as { n: number }).n;
};

describe.skipIf(!onPostgres())('shared read connections', () => {
  it('run a batch sent right behind a refused caller’s, which was the first to use the statement', async () => {
    const db = oneLane();
    // The refused batch carries the statement's Parse, the next one relies on it.
    const sql = newCount();
    const first = count(db, refused(a), sql, 'Ann');
    const second = count(db, a.owner.as, sql, 'Ann');
    expect(await sqlstate(first)).toBe('22P02');
    expect(await second).toEqual([{ n: 1 }]);
    expect(await count(db, a.owner.as, sql, 'Ann')).toEqual([{ n: 1 }]);
  });

  it('stay usable after a statement that does not parse, for the batches sent right behind it', async () => {
    const db = oneLane();
    const sql = newCount();
    // The first batch also carries the claims statement's Parse, which the others rely on.
    const broken = count(db, a.owner.as, 'select count(no_such_column) as n from contacts where $1', 'Ann');
    const next = count(db, a.owner.as, sql, 'Ann');
    expect(await sqlstate(broken)).toBe('42703');
    expect(await next).toEqual([{ n: 1 }]);
    expect(await count(db, b.owner.as, sql, 'Bob')).toEqual([{ n: 1 }]);
  });

  it('keep each caller to their own claims and rows, many at once on one connection', async () => {
    const db = oneLane();
    const sql = `select current_setting('request.jwt.claim.sub') as sub,
                        array(select first_name from contacts order by 1) as names, $1::int as i`;
    const calls = Array.from({ length: 60 }, (_, i) => {
      const who = [a.owner, b.owner, null][i % 3];
      const call = db.queryAs<{ sub: string; names: string[]; i: number }>(
        who ? who.as : refused(a),
        sql,
        [i],
        { readOnly: true },
      );
      return who ? call : sqlstate(call);
    });
    const results = await Promise.all(calls);
    results.forEach((r, i) => {
      if (i % 3 === 2) expect(r).toBe('22P02');
      else {
        const [t, name] = i % 3 === 0 ? [a, 'Ann'] : [b, 'Bob'];
        expect(r).toEqual([{ sub: t.owner.userId, names: [name], i }]);
      }
    });
  });

  /** The connections that `reads` reads of 10 ms each, sent at once, open. */
  const connectionsFor = async (db: Database, reads: number) => {
    const before = await backends();
    await Promise.all(
      Array.from({ length: reads }, () =>
        db.queryAs(a.owner.as, 'select pg_sleep(0.01), $1::int as i', [1], { readOnly: true }),
      ),
    );
    return (await backends()) - before;
  };

  it('take no more connections than configured, however many reads are in flight', async () => {
    // 2 shared and 1 pooled: the shared ones take the reads unless they look stalled (no batch
    // finished within STALL_MS, which a pause of a busy machine in the middle of the burst can
    // make them), and then the one pooled connection does. A lane opened per read would show ~40.
    const n = await connectionsFor(open(1, 2), 40);
    expect(n).toBeGreaterThanOrEqual(2);
    expect(n).toBeLessThanOrEqual(3);
  });

  it('send the reads beyond a full connection to the pool, each on a connection of its own', async () => {
    // At least the 5 beyond the lane's queue; more when sending them took longer than STALL_MS
    // on a busy machine (the lane then looks held up), but never more than the pool's 8.
    const taken = await connectionsFor(open(8, 1), MAX_QUEUE + 5);
    expect(taken).toBeGreaterThanOrEqual(1 + 5);
    expect(taken).toBeLessThanOrEqual(1 + 8);
  });

  it('let a read pass a slow one that holds the only shared connection', async () => {
    const db = oneLane();
    const slow = db.queryAs(a.owner.as, 'select pg_sleep($1::float8)', [1], { readOnly: true });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the slow read is running by now
    const fast = db.queryAs(a.owner.as, 'select $1::int as i', [7], { readOnly: true });
    const first = await Promise.race([slow.then(() => 'slow'), fast.then(() => 'fast')]);
    expect(first).toBe('fast');
    await slow;
  });

  it('replace a connection the server closed', async () => {
    const db = oneLane();
    const pid = async () =>
      (
        await db.queryAs<{ pid: number }>(a.owner.as, 'select pg_backend_pid() as pid where $1', [true], {
          readOnly: true,
        })
      )[0]?.pid;
    const gone = await pid();
    await fresh.db.query('select pg_terminate_backend($1)', [gone]);
    // The driver learns of it when the socket closes: a read sent before that fails with it.
    let next: number | undefined;
    for (let i = 0; i < 3 && next === undefined; i++) next = await pid().catch(() => undefined);
    expect(next).toBeGreaterThan(0);
    expect(next).not.toBe(gone);
  });
});

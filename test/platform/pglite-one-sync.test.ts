// Statements as one implicit transaction in one call into PGlite (src/platform/db/pglite-one-sync.ts):
// values bound and rows read as PGlite's own query() binds and reads them, named statements kept
// within their bound, and a statement that went stale or failed parsed afresh when it returns.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runOneSync, runTransaction } from '../../src/platform/db/pglite-one-sync.ts';
import { MAX_STATEMENTS_PER_CONNECTION } from '../../src/platform/db/statement-cache.ts';

let db: PGlite;
beforeAll(async () => {
  db = await PGlite.create();
});
afterAll(() => db?.close());

const one = async (text: string, values: unknown[] = []) => (await runOneSync(db, [{ text, values }]))[0];

describe('one call, one Sync on PGlite', () => {
  it('binds values and reads rows as query() does', async () => {
    const sql = `select $1::int8 as n, $2::numeric as price, $3::bool as flag, $4::jsonb as doc,
      $5::timestamptz as at, $6::uuid[] as ids, $7::text[] as tags, $8::text as nothing`;
    const values = [
      42,
      '19.90',
      false,
      { a: [1, 'two'], b: null },
      new Date('2026-11-24T10:00:00Z'),
      ['00000000-0000-4000-8000-000000000001'],
      ['vip', 'with "quotes", and comma'],
      null,
    ];
    const [viaQuery] = (await db.query(sql, values)).rows;
    expect(await one(sql, values)).toEqual([viaQuery]);
  });

  it('runs the statements as one transaction: settings hold to the Sync, a failure keeps nothing', async () => {
    await db.exec('create table kept (v text check (length(v) < 5))');
    const [, seen] = await runOneSync(db, [
      { text: `select set_config('svc.probe', $1, true)`, values: ['here'] },
      { text: `select current_setting('svc.probe', true) as v`, values: [] },
    ]);
    expect(seen).toEqual([{ v: 'here' }]);
    expect(await one(`select current_setting('svc.probe', true) as v`)).toEqual([{ v: '' }]);
    const failing = runOneSync(db, [
      { text: 'insert into kept (v) values ($1)', values: ['ok'] },
      { text: 'insert into kept (v) values ($1)', values: ['too long'] },
    ]);
    await expect(failing).rejects.toMatchObject({ code: '23514' });
    expect(await one('select count(*)::int as n from kept')).toEqual([{ n: 0 }]);
  });

  it(`keeps at most ${MAX_STATEMENTS_PER_CONNECTION} named statements, and evicted shapes run again`, async () => {
    const held = async () => (await one('select count(*)::int as n from pg_prepared_statements'))?.[0]?.n;
    for (let k = 0; k <= MAX_STATEMENTS_PER_CONNECTION + 5; k++) {
      expect(await one(`select $1::int + ${k} as v`, [1])).toEqual([{ v: 1 + k }]);
    }
    expect(await held()).toBeLessThanOrEqual(MAX_STATEMENTS_PER_CONNECTION);
    expect(await one('select $1::int + 0 as v', [2])).toEqual([{ v: 2 }]);
  });

  it('parses a statement afresh after its table changed under it or it failed', async () => {
    await db.exec('create table shifting (a int)');
    await db.exec('insert into shifting values (1)');
    const read = 'select * from shifting where a = $1';
    expect(await one(read, [1])).toEqual([{ a: 1 }]);
    await db.exec('alter table shifting add column b int');
    // As on a server connection: the request that meets the changed result type fails (0A000),
    // the next one parses the statement again and sees the new column.
    await expect(one(read, [1])).rejects.toMatchObject({ code: '0A000' });
    expect(await one(read, [1])).toEqual([{ a: 1, b: null }]);
    // The first statement fails before the second's Parse is reached: both still run afterwards.
    const later = 'select $1::int * 2 as v';
    await expect(
      runOneSync(db, [
        { text: 'select $1::uuid as id', values: ['not-a-uuid'] },
        { text: later, values: [4] },
      ]),
    ).rejects.toMatchObject({ code: '22P02' });
    expect(await one(later, [5])).toEqual([{ v: 10 }]);
    expect(await one('select $1::uuid as id', ['00000000-0000-4000-8000-000000000002'])).toHaveLength(1);
  });

  it('runs an explicit transaction: committed whole, or rolled back with the session left usable', async () => {
    await db.exec('create table ledger (v text check (length(v) < 5))');
    const count = async () => (await one('select count(*)::int as n from ledger'))?.[0]?.n;
    await runTransaction(
      db,
      { text: `select set_config('svc.probe', $1, true)`, values: ['tx'] },
      async (q) => {
        await q('insert into ledger (v) values ($1)', ['a']);
        // The prelude's setting holds for the whole transaction.
        expect(await q(`select current_setting('svc.probe', true) as v`)).toEqual([{ v: 'tx' }]);
        // A savepoint undoes a failed part and the transaction carries on.
        await q('savepoint part');
        await expect(q('insert into ledger (v) values ($1)', ['too long'])).rejects.toMatchObject({
          code: '23514',
        });
        await q('rollback to savepoint part');
        await q('insert into ledger (v) values ($1)', ['b']);
      },
    );
    expect(await count()).toBe(2);
    await expect(
      runTransaction(db, null, async (q) => {
        await q('insert into ledger (v) values ($1)', ['c']);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    // The prelude fails in the same batch as `begin`: the open, failed block is rolled back.
    await expect(
      runTransaction(db, { text: 'select $1::uuid', values: ['not-a-uuid'] }, async () => 'never'),
    ).rejects.toMatchObject({ code: '22P02' });
    // A failure carried on without a savepoint ends in a rollback, which is not reported as done.
    await expect(
      runTransaction(db, null, async (q) => {
        await q('insert into ledger (v) values ($1)', ['d']);
        await q('insert into ledger (v) values ($1)', ['too long']).catch(() => {});
      }),
    ).rejects.toMatchObject({ code: '25P02' });
    expect(await count()).toBe(2);
    expect(await one(`select current_setting('svc.probe', true) as v`)).toEqual([{ v: '' }]);
  });
});

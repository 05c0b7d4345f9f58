// db.queryAs: one statement as the caller in a transaction of its own, which on PostgreSQL is the
// claims statement and the statement before one Sync, with no begin or commit
// (src/platform/db/one-sync.ts). It must guard exactly as asPrincipal does, leave nothing of the
// caller on a pooled connection, and keep the connection usable after a failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { seedTenant, sqlstate, type Tenant } from './fixtures.ts';

let fresh: FreshDatabase;
let a: Tenant;
let b: Tenant;
let theirs: string;
beforeAll(async () => {
  fresh = await freshDatabase();
  a = await seedTenant(fresh.db, 'query-as-a');
  b = await seedTenant(fresh.db, 'query-as-b');
  const [row] = await fresh.db.query<{ id: string }>(
    `insert into contacts (organization_id, first_name) values ($1, 'Theirs') returning id`,
    [b.orgId],
  );
  theirs = (row as { id: string }).id;
});
afterAll(() => fresh?.drop());

const owner = () => a.owner.as;

describe('db.queryAs', () => {
  it('reads and writes as the caller, and another tenant’s rows stay invisible', async () => {
    const [mine] = await fresh.db.queryAs<{ id: string }>(
      owner(),
      `insert into contacts (first_name) values ('Mine') returning id`,
      [],
    );
    const seen = await fresh.db.queryAs<{ id: string }>(
      owner(),
      'select id from contacts where id = any($1::uuid[])',
      [[mine?.id, theirs]],
      { readOnly: true },
    );
    expect(seen.map((r) => r.id)).toEqual([mine?.id]);
  });

  it('commits a write whole or not at all, with no begin or commit around it', async () => {
    const named = async (name: string) =>
      (await fresh.db.query('select id from contacts where first_name = $1', [name])).length;
    // The second row breaks a check (at most 200 characters) after the first was inserted: the
    // statement, and so the implicit transaction, rolls back at the Sync.
    const code = await sqlstate(
      fresh.db.queryAs(owner(), 'insert into contacts (first_name) select unnest($1::text[])', [
        ['Half', 'x'.repeat(201)],
      ]),
    );
    expect(code).toBe('23514');
    expect(await named('Half')).toBe(0);
    await fresh.db.queryAs(owner(), 'insert into contacts (first_name) select unnest($1::text[])', [
      ['Whole', 'Whole'],
    ]);
    // Seen from another connection: committed at the Sync.
    expect(await named('Whole')).toBe(2);
  });

  it('never joins another caller’s open transaction (PGlite has one connection for both)', async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted = () => {};
    const open = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const other = fresh.db.transaction(async (tx) => {
      await tx.query(`insert into contacts (organization_id, first_name) values ($1, 'Uncommitted')`, [
        a.orgId,
      ]);
      inserted();
      await gate;
      throw new Error('rolled back');
    });
    await open;
    const seen = fresh.db.queryAs<{ n: number }>(
      owner(),
      'select count(*)::int as n from contacts where first_name = $1',
      ['Uncommitted'],
      { readOnly: true },
    );
    release();
    await expect(other).rejects.toThrow('rolled back');
    expect((await seen)[0]?.n).toBe(0);
  });

  it('runs each call under its own caller and mode when the same tokens come back (PGlite keeps their claims encoded)', async () => {
    const who = `select current_setting('request.jwt.claim.sub') as sub,
                        current_setting('transaction_read_only') as ro, $1::text as n`;
    type Seen = { sub: string; ro: string };
    for (let round = 0; round < 2; round++) {
      for (const m of [a.owner, b.owner, a.member]) {
        for (const readOnly of [true, false, true]) {
          const [once] = await fresh.db.queryAs<Seen>(m.as, who, [String(round)], { readOnly });
          expect(once).toMatchObject({ sub: m.userId, ro: readOnly ? 'on' : 'off' });
          const [inTx] = await fresh.db.asPrincipal(m.as, (tx) => tx.query<Seen>(who, ['tx']), { readOnly });
          expect(inTx).toMatchObject({ sub: m.userId, ro: readOnly ? 'on' : 'off' });
        }
      }
    }
  });

  it('refuses a write when read-only', async () => {
    const code = await sqlstate(
      fresh.db.queryAs(owner(), 'update contacts set last_name = $1', ['x'], { readOnly: true }),
    );
    expect(code).toBe('25006');
  });

  it('leaves no role or claims on the pooled connections, after successes and failures alike', async () => {
    for (let i = 0; i < 30; i++) {
      if (i % 3 === 0) {
        expect(await sqlstate(fresh.db.queryAs(owner(), 'select $1::uuid', ['not-a-uuid']))).toBe('22P02');
      } else {
        await fresh.db.queryAs(owner(), 'select count(*) from contacts where first_name = $1', ['Mine'], {
          readOnly: true,
        });
      }
      const [s] = await fresh.db.query<{ who: string; org: string | null; ro: string }>(
        `select current_user as who, current_setting('svc.org_id', true) as org,
                current_setting('transaction_read_only') as ro`,
      );
      expect(s?.who).not.toBe('authenticated');
      expect(s?.org ?? '').toBe('');
      expect(s?.ro).toBe('off');
    }
  });

  it('sees a removed member as no one at their next call', async () => {
    const m = a.member;
    const count = () =>
      fresh.db.queryAs<{ n: number }>(m.as, 'select count(*)::int as n from contacts where first_name = $1', [
        'Mine',
      ]);
    expect((await count())[0]?.n).toBeGreaterThan(0);
    await fresh.db.query('delete from organization_members where organization_id = $1 and user_id = $2', [
      a.orgId,
      m.userId,
    ]);
    expect((await count())[0]?.n).toBe(0);
  });
});

// Managing the roster through RLS and the guard_owners trigger: members manage nothing, admins
// manage everyone but owners, nobody adds anyone directly (joining is accepting an invitation:
// see invitations.test.ts), an organization never loses its last owner, and a removed member's
// still-valid JWT stops working on the very next statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreshDatabase, freshDatabase, onPostgres } from '../helpers/db.ts';
import { addMember, as, createUser, type Role, seedTenant, sqlstate } from './fixtures.ts';

let fresh: FreshDatabase;
beforeAll(async () => {
  fresh = await freshDatabase();
});
afterAll(() => fresh?.drop());

const add =
  'insert into organization_members (organization_id, user_id, role) values ($1, $2, $3) returning user_id';
const setRole = 'update organization_members set role = $2 where user_id = $1 returning user_id';
const remove = 'delete from organization_members where user_id = $1 returning user_id';
const roleOf = async (orgId: string, userId: string) =>
  (
    await fresh.db.query(
      'select role from organization_members where organization_id = $1 and user_id = $2',
      [orgId, userId],
    )
  )[0]?.role ?? null;

describe('members and admins', () => {
  it('a member cannot add, promote or remove anyone, itself included', async () => {
    const t = await seedTenant(fresh.db, 'm-member');
    const stranger = await createUser(fresh.db);
    expect(await sqlstate(as(fresh.db, t.member.as, add, [t.orgId, stranger, 'member']))).toBe('42501');
    expect(await as(fresh.db, t.member.as, setRole, [t.member.userId, 'admin'])).toEqual([]);
    expect(await as(fresh.db, t.member.as, remove, [t.admin.userId])).toEqual([]);
    expect(await roleOf(t.orgId, t.member.userId)).toBe('member');
    expect(await roleOf(t.orgId, t.admin.userId)).toBe('admin');
  });

  it('neither an owner nor an admin can add anyone without their consent (42501)', async () => {
    const t = await seedTenant(fresh.db, 'm-consent');
    const stranger = await createUser(fresh.db);
    for (const who of [t.owner, t.admin])
      expect(await sqlstate(as(fresh.db, who.as, add, [t.orgId, stranger, 'member']))).toBe('42501');
    expect(await roleOf(t.orgId, stranger)).toBeNull();
  });

  it('an admin promotes, demotes and removes non-owners', async () => {
    const t = await seedTenant(fresh.db, 'm-admin');
    const newcomer = (await addMember(fresh.db, t.orgId, 'member')).userId;
    expect(await as(fresh.db, t.admin.as, setRole, [newcomer, 'admin'])).toHaveLength(1);
    expect(await as(fresh.db, t.admin.as, setRole, [newcomer, 'member'])).toHaveLength(1);
    expect(await as(fresh.db, t.admin.as, remove, [newcomer])).toHaveLength(1);
    expect(await roleOf(t.orgId, newcomer)).toBeNull();
  });

  it('an admin cannot add, promote to, demote or remove an owner (42501)', async () => {
    const t = await seedTenant(fresh.db, 'm-admin-owner');
    const stranger = await createUser(fresh.db);
    const attempts: [string, unknown[]][] = [
      [add, [t.orgId, stranger, 'owner']],
      [setRole, [t.admin.userId, 'owner']],
      [setRole, [t.member.userId, 'owner']],
      [setRole, [t.owner.userId, 'admin']],
      [remove, [t.owner.userId]],
    ];
    for (const [sql, params] of attempts)
      expect(await sqlstate(as(fresh.db, t.admin.as, sql, params))).toBe('42501');
    expect(await roleOf(t.orgId, t.owner.userId)).toBe('owner');
    expect(await roleOf(t.orgId, t.admin.userId)).toBe('admin');
    expect(await roleOf(t.orgId, stranger)).toBeNull();
  });

  it('an owner may make another owner, who may then step down', async () => {
    const t = await seedTenant(fresh.db, 'm-owner');
    expect(await as(fresh.db, t.owner.as, setRole, [t.admin.userId, 'owner'])).toHaveLength(1);
    // The role comes from membership, not from the token, so the same JWT now acts as an owner.
    expect(await as(fresh.db, t.admin.as, setRole, [t.admin.userId, 'admin'])).toHaveLength(1);
    expect(await roleOf(t.orgId, t.admin.userId)).toBe('admin');
  });
});

describe('the last owner', () => {
  it.each([
    ['removed', remove, []],
    ['demoted', setRole, ['admin']],
  ] as const)('cannot be %s (SV409), even by themself', async (_what, sql, extra) => {
    const t = await seedTenant(fresh.db, 'm-last');
    expect(await sqlstate(as(fresh.db, t.owner.as, sql, [t.owner.userId, ...extra]))).toBe('SV409');
    expect(await roleOf(t.orgId, t.owner.userId)).toBe('owner');
  });

  it('can leave once another owner exists', async () => {
    const t = await seedTenant(fresh.db, 'm-leave');
    const other = await addMember(fresh.db, t.orgId, 'owner');
    expect(await as(fresh.db, t.owner.as, remove, [t.owner.userId])).toHaveLength(1);
    expect(await roleOf(t.orgId, other.userId)).toBe('owner');
  });

  // Two owners demoting each other at the same moment: without a per-organization lock each
  // trigger would still see the other owner (uncommitted change), both would commit and the
  // organization would be left with none. Only PostgreSQL can interleave the two transactions;
  // PGlite runs them one after the other.
  it.runIf(onPostgres())('survives two owners demoting each other concurrently', async () => {
    const t = await seedTenant(fresh.db, 'm-race');
    const second = await addMember(fresh.db, t.orgId, 'owner');
    let arrived = 0;
    // Each transaction demotes the other owner, then waits (at most 2 s) for the other to get as
    // far before committing. With a proper lock the second one blocks instead, and the wait ends.
    const demoteThenWait = (me: { as: typeof t.owner.as }, target: string) =>
      fresh.db.asPrincipal(me.as, async (tx) => {
        await tx.query(setRole, [target, 'admin']);
        arrived++;
        for (let i = 0; i < 40 && arrived < 2; i++) await new Promise((r) => setTimeout(r, 50));
      });
    const results = await Promise.allSettled([
      demoteThenWait(t.owner, second.userId),
      demoteThenWait(second, t.owner.userId),
    ]);
    const owners = await fresh.db.query(
      "select 1 from organization_members where organization_id = $1 and role = 'owner'",
      [t.orgId],
    );
    expect(owners.length).toBeGreaterThanOrEqual(1);
    const refused = results.flatMap((r) =>
      r.status === 'rejected' ? [(r.reason as { code?: string }).code] : [],
    );
    expect(refused).toEqual(['SV409']);
  });
});

describe('a removed member', () => {
  it.each(['member', 'admin'] as Role[])(
    '(%s) sees nothing on the next statement with the same JWT',
    async (role) => {
      const t = await seedTenant(fresh.db, 'm-removed');
      await fresh.db.query("insert into contacts (organization_id, first_name) values ($1, 'Kept')", [
        t.orgId,
      ]);
      const gone = t[role];
      const visible = async () => {
        const [r] = await as(
          fresh.db,
          gone.as,
          `select (select count(*) from contacts)::int as contacts, (select count(*) from organizations)::int as orgs,
                (select count(*) from organization_members)::int as members`,
        );
        return r;
      };
      expect(await visible()).toEqual({ contacts: 1, orgs: 1, members: 3 });
      expect(await as(fresh.db, t.owner.as, remove, [gone.userId])).toHaveLength(1);
      expect(await visible()).toEqual({ contacts: 0, orgs: 0, members: 0 });
      const write = as(fresh.db, gone.as, "insert into contacts (first_name) values ('Late')");
      expect(await sqlstate(write)).toBe('42501');
    },
  );
});

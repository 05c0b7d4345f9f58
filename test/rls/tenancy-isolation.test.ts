// Isolation on the tables that describe tenants themselves (organizations, members, agent keys,
// auth attempts), and the schemas no caller may touch at all. These tables have narrower grants
// than business data, so some attempts fail on the grant (42501) rather than matching no rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import {
  type Agent,
  ANON,
  as,
  rowAsOwner,
  seedAgent,
  seedTenant,
  sqlstate,
  type Tenant,
} from './fixtures.ts';

let fresh: FreshDatabase;
let a: Tenant;
let b: Tenant;
let bKey: Agent;
beforeAll(async () => {
  fresh = await freshDatabase();
  a = await seedTenant(fresh.db, 'ten-a');
  b = await seedTenant(fresh.db, 'ten-b');
  await seedAgent(fresh.db, a.orgId, ['read']);
  bKey = await seedAgent(fresh.db, b.orgId, ['read']);
  await fresh.db.query(
    `insert into agent_auth_attempts (organization_id, key_id, key_prefix, outcome, reason)
     values ($1, $2, $3, 'failure', 'bad_secret'), ($4, null, null, 'failure', 'unknown_key')`,
    [b.orgId, bKey.keyId, bKey.prefix, a.orgId],
  );
});
afterAll(() => fresh?.drop());

const orgRow = (id: string) => rowAsOwner(fresh.db, 'organizations', id);

describe('organizations', () => {
  it('shows A its own organization only', async () => {
    const rows = await as(fresh.db, a.owner.as, 'select id from organizations');
    expect(rows.map((r) => r.id)).toEqual([a.orgId]);
  });

  it('cannot rename or delete B by id, and B stays as it was', async () => {
    const before = await orgRow(b.orgId);
    expect(
      await as(fresh.db, a.owner.as, "update organizations set name = 'x' where id = $1 returning id", [
        b.orgId,
      ]),
    ).toEqual([]);
    expect(
      await as(fresh.db, a.owner.as, 'delete from organizations where id = $1 returning id', [b.orgId]),
    ).toEqual([]);
    expect(await orgRow(b.orgId)).toEqual(before);
  });

  it('cannot create organizations, re-key its own, or change its plan (operator path only)', async () => {
    expect(await sqlstate(as(fresh.db, a.owner.as, "insert into organizations (name) values ('x')"))).toBe(
      '42501',
    );
    const before = await orgRow(a.orgId);
    const rekey = as(fresh.db, a.owner.as, 'update organizations set id = $2 where id = $1', [
      a.orgId,
      b.orgId,
    ]);
    expect(await sqlstate(rekey)).toBe('42501');
    const upgrade = as(fresh.db, a.owner.as, "update organizations set plan = 'scale' where id = $1", [
      a.orgId,
    ]);
    expect(await sqlstate(upgrade)).toBe('42501');
    expect(await orgRow(a.orgId)).toEqual(before);
  });
});

describe('organization_members', () => {
  const roster = (orgId: string) =>
    fresh.db.query(
      'select user_id, role from organization_members where organization_id = $1 order by user_id',
      [orgId],
    );

  it("shows A's roster and nothing of B's", async () => {
    const rows = await as(fresh.db, a.owner.as, 'select organization_id, user_id from organization_members');
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((r) => r.organization_id))).toEqual(new Set([a.orgId]));
  });

  it("cannot change or remove B's members by id", async () => {
    const before = await roster(b.orgId);
    const demote = "update organization_members set role = 'member' where user_id = $1 returning user_id";
    expect(await as(fresh.db, a.owner.as, demote, [b.admin.userId])).toEqual([]);
    const remove = 'delete from organization_members where user_id = $1 returning user_id';
    expect(await as(fresh.db, a.owner.as, remove, [b.member.userId])).toEqual([]);
    expect(await roster(b.orgId)).toEqual(before);
  });

  it("cannot add anyone to B (42501), nor move one of A's members into B", async () => {
    const before = await roster(b.orgId);
    const add = "insert into organization_members (organization_id, user_id, role) values ($1, $2, 'admin')";
    expect(await sqlstate(as(fresh.db, a.owner.as, add, [b.orgId, a.member.userId]))).toBe('42501');
    const move = 'update organization_members set organization_id = $2 where user_id = $1';
    expect(await sqlstate(as(fresh.db, a.owner.as, move, [a.member.userId, b.orgId]))).toBe('42501');
    expect(await roster(b.orgId)).toEqual(before);
  });
});

describe('agent_api_keys', () => {
  it("shows A's owner none of B's keys", async () => {
    const rows = await as(fresh.db, a.owner.as, 'select id, organization_id from agent_api_keys');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.organization_id).toBe(a.orgId);
    expect(
      await as(fresh.db, a.owner.as, 'select id from agent_api_keys where id = $1', [bKey.keyId]),
    ).toEqual([]);
  });

  it("cannot revoke, delete, create or move keys across tenants; B's key stays active", async () => {
    const before = await rowAsOwner(fresh.db, 'agent_api_keys', bKey.keyId);
    const revoke = 'update agent_api_keys set is_active = false where id = $1 returning id';
    expect(await as(fresh.db, a.owner.as, revoke, [bKey.keyId])).toEqual([]);
    // Keys are never deleted through RLS (revocation is is_active), nor created there.
    expect(
      await sqlstate(as(fresh.db, a.owner.as, 'delete from agent_api_keys where id = $1', [bKey.keyId])),
    ).toBe('42501');
    const create = `insert into agent_api_keys (organization_id, name, key_prefix, key_hash, scopes, expires_at)
                    values ($1, 'k', 'svc_ak_ZZZZZ', 'h', '{admin}', now() + interval '1 day')`;
    expect(await sqlstate(as(fresh.db, a.owner.as, create, [b.orgId]))).toBe('42501');
    const move = 'update agent_api_keys set organization_id = $1 where organization_id = $2';
    expect(await sqlstate(as(fresh.db, a.owner.as, move, [b.orgId, a.orgId]))).toBe('42501');
    expect(await rowAsOwner(fresh.db, 'agent_api_keys', bKey.keyId)).toEqual(before);
  });
});

describe('agent_auth_attempts', () => {
  it("shows A only its own attempts; callers can't write the log", async () => {
    const rows = await as(fresh.db, a.owner.as, 'select organization_id, reason from agent_auth_attempts');
    expect(rows).toEqual([{ organization_id: a.orgId, reason: 'unknown_key' }]);
    const writes = [
      "insert into agent_auth_attempts (organization_id, outcome, reason) values ($1, 'success', 'x')",
      "update agent_auth_attempts set reason = 'x' where organization_id = $1",
      'delete from agent_auth_attempts where organization_id = $1',
    ];
    for (const sql of writes) expect(await sqlstate(as(fresh.db, a.owner.as, sql, [b.orgId]))).toBe('42501');
    const [left] = await fresh.db.query('select reason from agent_auth_attempts where organization_id = $1', [
      b.orgId,
    ]);
    expect(left?.reason).toBe('bad_secret');
  });
});

describe('shared and private schemas', () => {
  it('lets anyone, signed in or not, read the plans, and nobody change them', async () => {
    for (const who of [ANON, a.member.as]) {
      const rows = await as(fresh.db, who, 'select slug from plans order by rank');
      expect(rows.map((r) => r.slug)).toEqual(['free', 'starter', 'growth', 'scale']);
    }
    expect(
      await sqlstate(as(fresh.db, a.owner.as, "update plans set price_usd = 0 where slug = 'scale'")),
    ).toBe('42501');
  });

  it.each(['auth.users', 'auth.sessions', 'auth.refresh_tokens', 'app.counters'])(
    '%s is not readable by authenticated or anon (42501)',
    async (table) => {
      for (const who of [a.owner.as, ANON]) {
        expect(await sqlstate(as(fresh.db, who, `select * from ${table} limit 1`))).toBe('42501');
      }
    },
  );

  it("cannot burn another tenant's order numbers through the counter function", async () => {
    const call = as(fresh.db, a.owner.as, "select app.next_counter($1, 'order_number')", [b.orgId]);
    expect(await sqlstate(call)).toBe('42501');
  });

  it.each([
    'contacts',
    'warehouses',
    'inventory_items',
    'orders',
    'order_items',
    'order_status_events',
    'organizations',
    'organization_members',
    'agent_api_keys',
    'agent_auth_attempts',
  ])('anon cannot select from %s at all (42501, no grant)', async (table) => {
    expect(await sqlstate(as(fresh.db, ANON, `select 1 from ${table} limit 1`))).toBe('42501');
  });
});

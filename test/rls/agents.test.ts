// Agents act by scope (read → read; write → create and update; admin → delete), and only while
// their key row exists, is active and belongs to the organization their claims name. The JWT
// alone is never enough: revocation must bite on the very next statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { agentPrincipal, as, rowAsOwner, seedAgent, seedTenant, sqlstate, type Tenant } from './fixtures.ts';

let fresh: FreshDatabase;
let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  fresh = await freshDatabase();
  a = await seedTenant(fresh.db, 'agents-a');
  b = await seedTenant(fresh.db, 'agents-b');
  await fresh.db.query("insert into contacts (organization_id, first_name) values ($1, 'A1'), ($2, 'B1')", [
    a.orgId,
    b.orgId,
  ]);
});
afterAll(() => fresh?.drop());

const seedContact = async (orgId = a.orgId) =>
  (
    (
      await fresh.db.query<{ id: string }>(
        "insert into contacts (organization_id, first_name) values ($1, 'Seeded') returning id",
        [orgId],
      )
    )[0] as { id: string }
  ).id;
const contactOrgs = async (who: Parameters<typeof as>[1]) =>
  (await as(fresh.db, who, 'select organization_id from contacts')).map((r) => r.organization_id);

describe('scope read', () => {
  it("reads its organization's rows, never another's", async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['read']);
    const orgs = await contactOrgs(agent.as);
    expect(orgs.length).toBeGreaterThan(0);
    expect(new Set(orgs)).toEqual(new Set([a.orgId]));
  });

  it('cannot insert (42501), update or delete (0 rows)', async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['read']);
    const id = await seedContact();
    const before = await rowAsOwner(fresh.db, 'contacts', id);
    expect(await sqlstate(as(fresh.db, agent.as, "insert into contacts (first_name) values ('no')"))).toBe(
      '42501',
    );
    expect(
      await as(fresh.db, agent.as, "update contacts set notes = 'x' where id = $1 returning id", [id]),
    ).toEqual([]);
    expect(await as(fresh.db, agent.as, 'delete from contacts where id = $1 returning id', [id])).toEqual([]);
    expect(await rowAsOwner(fresh.db, 'contacts', id)).toEqual(before);
  });
});

describe('scope write', () => {
  it('creates in its own organization (default from claims) and updates', async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['read', 'write']);
    const [c] = await as(
      fresh.db,
      agent.as,
      "insert into contacts (first_name) values ('Agent') returning id, organization_id",
    );
    expect(c?.organization_id).toBe(a.orgId);
    const [o] = await as(
      fresh.db,
      agent.as,
      "insert into orders (notes) values ('by agent') returning id, status",
    );
    expect(o?.status).toBe('pending');
    expect(
      await as(fresh.db, agent.as, "update contacts set notes = 'ok' where id = $1 returning id", [c?.id]),
    ).toHaveLength(1);
  });

  it('deletes nothing (0 rows), even where members may delete', async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['write']);
    const id = await seedContact();
    const [item] = await fresh.db.query(
      "insert into inventory_items (organization_id, name) values ($1, 'I') returning id",
      [a.orgId],
    );
    expect(await as(fresh.db, agent.as, 'delete from contacts where id = $1 returning id', [id])).toEqual([]);
    expect(
      await as(fresh.db, agent.as, 'delete from inventory_items where id = $1 returning id', [item?.id]),
    ).toEqual([]);
    expect(await rowAsOwner(fresh.db, 'contacts', id)).not.toBeNull();
  });

  it('cannot write into another organization (42501)', async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['write']);
    const insert = as(
      fresh.db,
      agent.as,
      "insert into contacts (organization_id, first_name) values ($1, 'x')",
      [b.orgId],
    );
    expect(await sqlstate(insert)).toBe('42501');
  });
});

describe('scope admin', () => {
  it("deletes its organization's rows, and only those", async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['admin']);
    const mine = await seedContact();
    const theirs = await seedContact(b.orgId);
    expect(
      await as(fresh.db, agent.as, 'delete from contacts where id = $1 returning id', [mine]),
    ).toHaveLength(1);
    expect(await as(fresh.db, agent.as, 'delete from contacts where id = $1 returning id', [theirs])).toEqual(
      [],
    );
    expect(await rowAsOwner(fresh.db, 'contacts', theirs)).not.toBeNull();
  });

  it('still manages neither keys nor members (those are for people)', async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['admin']);
    expect(await as(fresh.db, agent.as, 'select id from agent_api_keys')).toEqual([]);
    const add = "insert into organization_members (organization_id, user_id, role) values ($1, $2, 'member')";
    expect(await sqlstate(as(fresh.db, agent.as, add, [a.orgId, b.owner.userId]))).toBe('42501');
  });
});

describe('the key behind the token', () => {
  it('an expired key sees nothing, even while its JWT would still be valid', async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['read']);
    expect((await contactOrgs(agent.as)).length).toBeGreaterThan(0);
    await fresh.db.query("update agent_api_keys set expires_at = now() - interval '1 second' where id = $1", [
      agent.keyId,
    ]);
    expect(await contactOrgs(agent.as)).toEqual([]);
  });

  it('a revoked key sees nothing on the next statement, with the same claims', async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['read', 'write']);
    expect((await contactOrgs(agent.as)).length).toBeGreaterThan(0);
    // Revoked the way an admin does it: through RLS, is_active only.
    const revoke = 'update agent_api_keys set is_active = false where id = $1 returning id';
    expect(await as(fresh.db, a.admin.as, revoke, [agent.keyId])).toHaveLength(1);
    expect(await contactOrgs(agent.as)).toEqual([]);
    expect(await as(fresh.db, agent.as, 'select id from organizations')).toEqual([]);
    expect(await sqlstate(as(fresh.db, agent.as, "insert into contacts (first_name) values ('late')"))).toBe(
      '42501',
    );
  });

  it("claims naming B with a key of A see nothing of either, and can't write", async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['read', 'write', 'admin']);
    const forged = agentPrincipal(agent.keyId, b.orgId, ['read', 'write', 'admin']);
    expect(await contactOrgs(forged)).toEqual([]);
    expect(await as(fresh.db, forged, 'select id from organizations')).toEqual([]);
    expect(await as(fresh.db, forged, 'select user_id from organization_members')).toEqual([]);
    const insert = as(
      fresh.db,
      forged,
      "insert into contacts (organization_id, first_name) values ($1, 'x')",
      [b.orgId],
    );
    expect(await sqlstate(insert)).toBe('42501');
  });

  it('a deleted key, or an id that is no key, sees nothing', async () => {
    const agent = await seedAgent(fresh.db, a.orgId, ['read']);
    await fresh.db.query('delete from agent_api_keys where id = $1', [agent.keyId]);
    expect(await contactOrgs(agent.as)).toEqual([]);
    // A person's user id passed off as an agent's sub: no key row has it.
    expect(await contactOrgs(agentPrincipal(a.owner.userId, a.orgId, ['admin']))).toEqual([]);
  });
});

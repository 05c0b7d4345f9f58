// What owners, admins and members may do inside their own organization (decisions.md, "Who may
// call what"): members work with business data but delete no contacts or orders and manage
// neither keys nor members; only owners make, unmake or are the last owner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import { as, type Role, rowAsOwner, seedAgent, seedTenant, sqlstate, type Tenant } from './fixtures.ts';

let fresh: FreshDatabase;
let t: Tenant;
beforeAll(async () => {
  fresh = await freshDatabase();
  t = await seedTenant(fresh.db, 'roles');
  await seedAgent(fresh.db, t.orgId, ['read', 'write']);
  await fresh.db.query(
    "insert into agent_auth_attempts (organization_id, outcome, reason) values ($1, 'failure', 'bad_secret')",
    [t.orgId],
  );
});
afterAll(() => fresh?.drop());

const who = (role: Role) => t[role].as;
const seed = async (table: string, values: string) =>
  (
    (
      await fresh.db.query(`insert into ${table} (organization_id, ${values}) returning id`, [t.orgId])
    )[0] as {
      id: string;
    }
  ).id;
const seedContact = () => seed('contacts', "first_name) values ($1, 'Ada'");
const seedOrder = () => seed('orders', "notes) values ($1, 'n'");
describe('business data', () => {
  it('a member reads, creates and updates contacts and orders', async () => {
    const m = who('member');
    const [c] = await as(fresh.db, m, "insert into contacts (first_name) values ('Bo') returning id");
    const [o] = await as(fresh.db, m, "insert into orders (notes) values ('first') returning id");
    expect(
      await as(fresh.db, m, "update contacts set last_name = 'Li' where id = $1 returning id", [c?.id]),
    ).toHaveLength(1);
    expect(
      await as(fresh.db, m, "update orders set notes = 'second' where id = $1 returning id", [o?.id]),
    ).toHaveLength(1);
    const [seen] = await as(
      fresh.db,
      m,
      'select c.last_name, o.notes from contacts c, orders o where c.id = $1 and o.id = $2',
      [c?.id, o?.id],
    );
    expect(seen).toEqual({ last_name: 'Li', notes: 'second' });
  });

  it.each(['contacts', 'orders'])('a member deletes no %s (0 rows), the row stays', async (table) => {
    const id = table === 'contacts' ? await seedContact() : await seedOrder();
    expect(
      await as(fresh.db, who('member'), `delete from ${table} where id = $1 returning id`, [id]),
    ).toEqual([]);
    expect(await rowAsOwner(fresh.db, table, id)).not.toBeNull();
  });

  it('a member may delete inventory items and order lines', async () => {
    const item = await seed('inventory_items', "name) values ($1, 'Widget'");
    const order = await seedOrder();
    const [line] = await fresh.db.query<{ id: string }>(
      "insert into order_items (organization_id, order_id, name, quantity) values ($1, $2, 'l', 1) returning id",
      [t.orgId, order],
    );
    expect(
      await as(fresh.db, who('member'), 'delete from inventory_items where id = $1 returning id', [item]),
    ).toHaveLength(1);
    expect(
      await as(fresh.db, who('member'), 'delete from order_items where id = $1 returning id', [line?.id]),
    ).toHaveLength(1);
  });

  it.each([
    ['owner', 'contacts'],
    ['owner', 'orders'],
    ['admin', 'contacts'],
    ['admin', 'orders'],
  ] as const)('an %s may delete %s', async (role, table) => {
    const id = table === 'contacts' ? await seedContact() : await seedOrder();
    expect(
      await as(fresh.db, who(role), `delete from ${table} where id = $1 returning id`, [id]),
    ).toHaveLength(1);
    expect(await rowAsOwner(fresh.db, table, id)).toBeNull();
  });
});

describe('agent keys and the auth log', () => {
  const columns = 'id, name, key_prefix, scopes, expires_at, is_active, last_used_at, created_at';

  it.each(['owner', 'admin'] as const)(
    "an %s sees the organization's keys and auth attempts",
    async (role) => {
      expect(await as(fresh.db, who(role), `select ${columns} from agent_api_keys`)).toHaveLength(1);
      expect(await as(fresh.db, who(role), 'select reason from agent_auth_attempts')).toHaveLength(1);
    },
  );

  it('a member sees neither, and cannot revoke a key (0 rows)', async () => {
    expect(await as(fresh.db, who('member'), `select ${columns} from agent_api_keys`)).toEqual([]);
    expect(await as(fresh.db, who('member'), 'select reason from agent_auth_attempts')).toEqual([]);
    expect(
      await as(fresh.db, who('member'), 'update agent_api_keys set is_active = false returning id'),
    ).toEqual([]);
  });

  it.each(['owner', 'admin', 'member'] as const)(
    'key_hash is never selectable, not even by an %s (42501)',
    async (role) => {
      expect(await sqlstate(as(fresh.db, who(role), 'select key_hash from agent_api_keys'))).toBe('42501');
      expect(await sqlstate(as(fresh.db, who(role), 'select * from agent_api_keys'))).toBe('42501');
    },
  );

  it('only name and is_active are writable, by owners and admins', async () => {
    const [k] = await as(
      fresh.db,
      who('admin'),
      "update agent_api_keys set name = 'renamed' returning id, name",
    );
    expect(k?.name).toBe('renamed');
    const widen = as(fresh.db, who('owner'), "update agent_api_keys set scopes = '{admin}'");
    expect(await sqlstate(widen)).toBe('42501');
  });

  it('revocation is final: a revoked key cannot be switched back on', async () => {
    const [k] = await as(fresh.db, who('owner'), 'update agent_api_keys set is_active = false returning id');
    const revive = as(fresh.db, who('owner'), 'update agent_api_keys set is_active = true where id = $1', [
      k?.id,
    ]);
    expect(await sqlstate(revive)).toBe('SV409');
    expect(await rowAsOwner(fresh.db, 'agent_api_keys', k?.id as string)).toMatchObject({ is_active: false });
  });
});

describe('organization', () => {
  it('an admin may rename it, a member may not (0 rows), nobody but an owner deletes it', async () => {
    expect(
      await as(fresh.db, who('admin'), "update organizations set name = 'Renamed' returning id"),
    ).toHaveLength(1);
    expect(await as(fresh.db, who('member'), "update organizations set name = 'Mine' returning id")).toEqual(
      [],
    );
    expect(await as(fresh.db, who('admin'), 'delete from organizations returning id')).toEqual([]);
    expect(await rowAsOwner(fresh.db, 'organizations', t.orgId)).toMatchObject({ name: 'Renamed' });
  });

  it('its owner may delete it, and everything in it goes too', async () => {
    const doomed = await seedTenant(fresh.db, 'doomed');
    await fresh.db.query("insert into contacts (organization_id, first_name) values ($1, 'Gone')", [
      doomed.orgId,
    ]);
    expect(await as(fresh.db, doomed.owner.as, 'delete from organizations returning id')).toHaveLength(1);
    const [left] = await fresh.db.query<{ n: number }>(
      `select (select count(*) from contacts where organization_id = $1)
            + (select count(*) from organization_members where organization_id = $1)::int as n`,
      [doomed.orgId],
    );
    expect(Number(left?.n)).toBe(0);
  });
});

// The invitation rules in the database (migrations/0008_invitations.sql), whatever path asks:
// an organization's invitations are its owners' and admins' alone, only an owner invites an owner,
// the addressee (matched by account email) is the only one who can see, accept or decline one,
// and accepting is the only way onto a roster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import {
  as,
  createUser,
  humanPrincipal,
  seedAgent,
  seedTenant,
  sqlstate,
  type Tenant,
  unique,
} from './fixtures.ts';

let fresh: FreshDatabase;
beforeAll(async () => {
  fresh = await freshDatabase();
});
afterAll(() => fresh?.drop());

const insert =
  'insert into organization_invitations (organization_id, email, role) values ($1, $2, $3) returning id';
const emailOf = async (userId: string) =>
  (await fresh.db.query<{ email: string }>('select email from auth.users where id = $1', [userId]))[0]
    ?.email as string;
/** A person with an account and no organization, acting as themselves. */
const person = async () => {
  const userId = await createUser(fresh.db, 'invitee');
  return {
    userId,
    email: await emailOf(userId),
    as: humanPrincipal(userId, '00000000-0000-4000-8000-000000000000', 'member'),
  };
};
/** The hash of the token an invitation mail would carry (migrations/0008_invitations.sql). */
const HASH = 'a'.repeat(64);
const invitationFor = async (t: Tenant, email: string, role = 'member') => {
  const id = (await as<{ id: string }>(fresh.db, t.owner.as, insert, [t.orgId, email, role]))[0]
    ?.id as string;
  await as(fresh.db, t.owner.as, 'select app.issue_invitation_token($1, $2)', [id, HASH]);
  return id;
};

describe('an organization’s invitations', () => {
  it('owners and admins create and see them; members and agents see none and create none', async () => {
    const t = await seedTenant(fresh.db, 'i-roles');
    expect(
      await as(fresh.db, t.admin.as, insert, [t.orgId, `${unique('a')}@example.test`, 'member']),
    ).toHaveLength(1);
    expect(
      await as(fresh.db, t.owner.as, insert, [t.orgId, `${unique('b')}@example.test`, 'owner']),
    ).toHaveLength(1);
    expect(await as(fresh.db, t.owner.as, 'select id from organization_invitations')).toHaveLength(2);
    expect(await as(fresh.db, t.member.as, 'select id from organization_invitations')).toEqual([]);
    expect(
      await sqlstate(as(fresh.db, t.member.as, insert, [t.orgId, `${unique('c')}@example.test`, 'member'])),
    ).toBe('42501');
    const agent = await seedAgent(fresh.db, t.orgId, ['read', 'write', 'admin']);
    expect(await as(fresh.db, agent.as, 'select id from organization_invitations')).toEqual([]);
    expect(
      await sqlstate(as(fresh.db, agent.as, insert, [t.orgId, `${unique('d')}@example.test`, 'member'])),
    ).toBe('42501');
  });

  it('only an owner invites an owner, or turns an invitation into one', async () => {
    const t = await seedTenant(fresh.db, 'i-owner');
    expect(
      await sqlstate(as(fresh.db, t.admin.as, insert, [t.orgId, `${unique('o')}@example.test`, 'owner'])),
    ).toBe('42501');
    const id = await invitationFor(t, `${unique('p')}@example.test`);
    const promote = "update organization_invitations set role = 'owner' where id = $1 returning id";
    expect(await sqlstate(as(fresh.db, t.admin.as, promote, [id]))).toBe('42501');
    expect(await as(fresh.db, t.owner.as, promote, [id])).toHaveLength(1);
  });

  it('the writer is the inviter; the expiry runs seven days from a write, or to a date within 30 days an owner or admin sets', async () => {
    const t = await seedTenant(fresh.db, 'i-forge');
    const email = `${unique('f')}@example.test`;
    const forged =
      "insert into organization_invitations (organization_id, email, role, invited_by, expires_at) values ($1, $2, 'member', $3, now() + interval '10 years')";
    expect(await sqlstate(as(fresh.db, t.admin.as, forged, [t.orgId, email, t.owner.userId]))).toBe('42501');
    const id = await invitationFor(t, email);
    const lengthen =
      "update organization_invitations set expires_at = now() + interval '10 years' where id = $1";
    expect(await sqlstate(as(fresh.db, t.admin.as, lengthen, [id]))).toBe('SV400');
    const read = async () =>
      (
        await fresh.db.query<{ invited_by: string; days: number }>(
          'select invited_by, round(extract(epoch from expires_at - now()) / 86400)::int as days from organization_invitations where id = $1',
          [id],
        )
      )[0];
    expect(await read()).toEqual({ invited_by: t.owner.userId, days: 7 });
    await fresh.db.query(
      "update organization_invitations set expires_at = now() + interval '1 day' where id = $1",
      [id],
    );
    await as(fresh.db, t.admin.as, "update organization_invitations set role = 'admin' where id = $1", [id]);
    expect(await read()).toEqual({ invited_by: t.admin.userId, days: 7 });
    const extend =
      "update organization_invitations set expires_at = now() + interval '20 days' where id = $1";
    await as(fresh.db, t.owner.as, extend, [id]);
    expect(await read()).toEqual({ invited_by: t.owner.userId, days: 20 });
    // A later change never shortens the date chosen.
    await as(fresh.db, t.admin.as, "update organization_invitations set role = 'member' where id = $1", [id]);
    expect(await read()).toEqual({ invited_by: t.admin.userId, days: 20 });
  });

  it('another tenant sees, changes and withdraws nothing, and cannot invite into it', async () => {
    const a = await seedTenant(fresh.db, 'i-a');
    const b = await seedTenant(fresh.db, 'i-b');
    const id = await invitationFor(a, `${unique('x')}@example.test`);
    expect(
      await as(fresh.db, b.owner.as, 'select id from organization_invitations where id = $1', [id]),
    ).toEqual([]);
    expect(
      await as(fresh.db, b.owner.as, 'delete from organization_invitations where id = $1 returning id', [id]),
    ).toEqual([]);
    expect(
      await sqlstate(as(fresh.db, b.owner.as, insert, [a.orgId, `${unique('y')}@example.test`, 'member'])),
    ).toBe('42501');
    expect(await fresh.db.query('select 1 from organization_invitations where id = $1', [id])).toHaveLength(
      1,
    );
  });
});

describe('the addressee', () => {
  it('sees and accepts only invitations to their own email, and joins with the invited role', async () => {
    const t = await seedTenant(fresh.db, 'i-accept');
    const me = await person();
    const someoneElse = await person();
    const id = await invitationFor(t, me.email, 'admin');
    expect(await as(fresh.db, someoneElse.as, 'select id from app.my_invitations()')).toEqual([]);
    expect(
      await as(fresh.db, someoneElse.as, 'select * from app.accept_invitation($1, $2)', [id, HASH]),
    ).toEqual([]);
    // The table itself stays closed to the addressee: they read it through the function only.
    expect(await as(fresh.db, me.as, 'select id from organization_invitations')).toEqual([]);
    expect(await as(fresh.db, me.as, 'select id, organization_name from app.my_invitations()')).toEqual([
      { id, organization_name: t.name },
    ]);
    expect(await as(fresh.db, me.as, 'select * from app.accept_invitation($1, $2)', [id, HASH])).toEqual([
      { organization_id: t.orgId, role: 'admin' },
    ]);
    const [row] = await fresh.db.query(
      'select role from organization_members where organization_id = $1 and user_id = $2',
      [t.orgId, me.userId],
    );
    expect(row?.role).toBe('admin');
    expect(await fresh.db.query('select 1 from organization_invitations where id = $1', [id])).toEqual([]);
  });

  it("needs the token's hash too, which only the organization's owners and admins set and nobody reads", async () => {
    const t = await seedTenant(fresh.db, 'i-token');
    const other = await seedTenant(fresh.db, 'i-token-other');
    const me = await person();
    const id = await invitationFor(t, me.email);
    expect(
      await as(fresh.db, me.as, 'select * from app.accept_invitation($1, $2)', [id, 'b'.repeat(64)]),
    ).toEqual([]);
    expect(await as(fresh.db, me.as, 'select app.decline_invitation($1, $2) as ok', [id, null])).toEqual([
      { ok: false },
    ]);
    const issue = 'select app.issue_invitation_token($1, $2) as ok';
    expect(await as(fresh.db, t.member.as, issue, [id, 'c'.repeat(64)])).toEqual([{ ok: false }]);
    expect(await as(fresh.db, other.owner.as, issue, [id, 'c'.repeat(64)])).toEqual([{ ok: false }]);
    expect(await sqlstate(as(fresh.db, t.owner.as, 'select token_hash from organization_invitations'))).toBe(
      '42501',
    );
    expect(
      await sqlstate(
        as(fresh.db, t.owner.as, 'update organization_invitations set token_hash = $1 where id = $2', [
          'c'.repeat(64),
          id,
        ]),
      ),
    ).toBe('42501');
    // An invitation written without a token (as over /rest/v1) cannot be accepted at all.
    const bare = (
      await as<{ id: string }>(fresh.db, t.owner.as, insert, [
        t.orgId,
        `${unique('n')}@example.test`,
        'member',
      ])
    )[0]?.id;
    expect(await as(fresh.db, me.as, 'select * from app.accept_invitation($1, $2)', [bare, null])).toEqual(
      [],
    );
    expect(await as(fresh.db, me.as, 'select * from app.accept_invitation($1, $2)', [id, HASH])).toHaveLength(
      1,
    );
  });

  it('keeps a membership the addressee already has', async () => {
    const t = await seedTenant(fresh.db, 'i-keep');
    // The invitation function refuses a roster email (already_member); the table alone does not.
    const id = await invitationFor(t, await emailOf(t.member.userId), 'admin');
    expect(
      await as(fresh.db, t.member.as, 'select * from app.accept_invitation($1, $2)', [id, HASH]),
    ).toEqual([{ organization_id: t.orgId, role: 'member' }]);
  });

  it('an agent has no email and no invitations', async () => {
    const t = await seedTenant(fresh.db, 'i-agent');
    const agent = await seedAgent(fresh.db, t.orgId, ['admin']);
    expect(await as(fresh.db, agent.as, 'select app.caller_email() as e')).toEqual([{ e: null }]);
    expect(await as(fresh.db, agent.as, 'select id from app.my_invitations()')).toEqual([]);
  });

  it('anonymous callers may not call the invitation functions', async () => {
    const anon = { kind: 'anon' as const, claims: { role: 'anon' } };
    expect(await sqlstate(as(fresh.db, anon, 'select * from app.my_invitations()'))).toBe('42501');
    expect(
      await sqlstate(
        as(fresh.db, anon, 'select * from app.accept_invitation($1, $2)', [
          '00000000-0000-4000-8000-000000000000',
          HASH,
        ]),
      ),
    ).toBe('42501');
  });
});

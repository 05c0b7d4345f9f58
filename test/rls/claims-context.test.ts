// The claims statement (src/platform/db/database.ts) chooses in TypeScript, from the token, which
// lookup the claims name (migrations/0038) and runs only that one. app.establish_context makes the
// same choice from the claims JSON. Both must yield the same transaction-local settings for every
// claims, ordinary or malformed, and the statement must touch only the tables of its own lookup:
// that is what made it cheaper than the read it guards (docs/performance.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/platform/db/database.ts';
import { type FreshDatabase, freshDatabase } from '../helpers/db.ts';
import {
  addMember,
  agentPrincipal,
  humanPrincipal,
  seedAgent,
  seedTenant,
  sqlstate,
  type Tenant,
} from './fixtures.ts';

let fresh: FreshDatabase;
let a: Tenant;
let b: Tenant;
let agentKey: string;
let revokedKey: string;
let expiredKey: string;
let removedUser: string;
beforeAll(async () => {
  fresh = await freshDatabase();
  a = await seedTenant(fresh.db, 'claims-a');
  b = await seedTenant(fresh.db, 'claims-b');
  agentKey = (await seedAgent(fresh.db, a.orgId, ['read', 'write', 'admin'])).keyId;
  revokedKey = (await seedAgent(fresh.db, a.orgId, ['read'])).keyId;
  await fresh.db.query('update agent_api_keys set is_active = false where id = $1', [revokedKey]);
  expiredKey = (await seedAgent(fresh.db, a.orgId, ['read'])).keyId;
  // Backdated past its expiry, as the clock would leave it (updated_at is the trigger's).
  await fresh.db.query(
    `update agent_api_keys set created_at = now() - interval '2 days', expires_at = now() - interval '1 day'
      where id = $1`,
    [expiredKey],
  );
  const removed = await addMember(fresh.db, a.orgId, 'member');
  removedUser = removed.userId;
  await fresh.db.query('delete from organization_members where user_id = $1', [removedUser]);
});
afterAll(() => fresh?.drop());

const SETTINGS = `select current_setting('svc.org_id', true) as org_id, current_setting('svc.org_role', true) as org_role,
  current_setting('svc.agent_scopes', true) as agent_scopes, current_setting('svc.can_read', true) as can_read,
  current_setting('svc.can_write', true) as can_write, current_setting('svc.can_delete', true) as can_delete`;

/** The settings the service's claims statement leaves for `principal`. */
const viaStatement = async (principal: Principal) =>
  (await fresh.db.asPrincipal(principal, (tx) => tx.query(SETTINGS), { readOnly: true }))[0];

/** The settings app.establish_context leaves for the same claims JSON. */
const viaFunction = (claims: Record<string, unknown>) =>
  fresh.db.transaction(async (tx) => {
    await tx.query('select app.establish_context($1::jsonb)', [JSON.stringify(claims)]);
    return (await tx.query(SETTINGS))[0];
  });

/** A principal for claims as authenticate.ts derives it: the kind follows the claims' role. */
function principalOf(claims: Record<string, unknown>): Principal {
  if (claims.role === 'service_role') return { kind: 'service', claims };
  if (claims.role !== 'authenticated') return { kind: 'anon', claims };
  if (claims.org_role === 'agent') return { kind: 'agent', keyId: String(claims.sub), claims };
  return { kind: 'user', userId: String(claims.sub), claims };
}

const agentClaims = (keyId: string, orgId: string, scopes: unknown) => ({
  ...agentPrincipal(keyId, orgId, []).claims,
  agent_scopes: scopes,
});

describe('the claims statement', () => {
  const cases: [string, () => Record<string, unknown>, Record<string, string> | null][] = [
    ['an owner', () => a.owner.as.claims, { org_id: 'a', org_role: 'owner', can_delete: 'all' }],
    ['an admin', () => a.admin.as.claims, { org_id: 'a', org_role: 'admin', can_delete: 'all' }],
    ['a member', () => a.member.as.claims, { org_id: 'a', org_role: 'member', can_delete: 'members' }],
    // The role comes from the membership, not from the token.
    [
      'a member claiming owner',
      () => humanPrincipal(a.member.userId, a.orgId, 'owner').claims,
      { org_role: 'member' },
    ],
    ['a removed member', () => humanPrincipal(removedUser, a.orgId, 'member').claims, { org_id: '' }],
    [
      'a member of another organization',
      () => humanPrincipal(b.owner.userId, a.orgId, 'owner').claims,
      { org_id: '' },
    ],
    [
      'an organization named by org_id only',
      () => ({
        sub: a.owner.userId,
        role: 'authenticated',
        app_metadata: { organization_id: '', org_id: a.orgId },
      }),
      { org_id: 'a', org_role: 'owner' },
    ],
    ['no app_metadata', () => ({ sub: a.owner.userId, role: 'authenticated' }), { org_id: '' }],
    [
      'app_metadata not an object',
      () => ({ sub: a.owner.userId, role: 'authenticated', app_metadata: [a.orgId] }),
      { org_id: '' },
    ],
    [
      'an empty sub',
      () => ({ sub: '', role: 'authenticated', app_metadata: { organization_id: a.orgId } }),
      { org_id: '' },
    ],
    [
      'an agent',
      () => agentClaims(agentKey, a.orgId, ['read', 'write', 'admin']),
      {
        org_id: 'a',
        org_role: 'agent',
        agent_scopes: '{read,write,admin}',
        can_write: 'true',
        can_delete: 'all',
      },
    ],
    [
      'an agent with read only',
      () => agentClaims(agentKey, a.orgId, ['read']),
      { org_role: 'agent', can_read: 'true', can_write: 'false', can_delete: '' },
    ],
    ['a revoked key', () => agentClaims(revokedKey, a.orgId, ['read']), { org_id: '', org_role: '' }],
    ['an expired key', () => agentClaims(expiredKey, a.orgId, ['read']), { org_id: '' }],
    [
      'a key claimed for another organization',
      () => agentClaims(agentKey, b.orgId, ['read']),
      { org_id: '' },
    ],
    [
      'scopes that are not an array',
      () => agentClaims(agentKey, a.orgId, 'admin'),
      { agent_scopes: '{}', can_read: 'false' },
    ],
    [
      'scopes with strangers, nulls and repeats',
      () => agentClaims(agentKey, a.orgId, ['write', null, 'root', 7, 'write', ['admin']]),
      { agent_scopes: '{write,write}', can_write: 'true', can_delete: '' },
    ],
    ['anon', () => ({ role: 'anon' }), { org_id: '', can_read: 'false' }],
    ['the service role', () => ({ role: 'service_role' }), { org_id: '' }],
  ];

  for (const [what, claimsOf, expected] of cases) {
    it(`sets what app.establish_context sets: ${what}`, async () => {
      const claims = claimsOf();
      const mine = await viaStatement(principalOf(claims));
      expect(mine).toEqual(await viaFunction(claims));
      const wanted = Object.fromEntries(
        Object.entries(expected ?? {}).map(([k, v]) => [k, v === 'a' ? a.orgId : v]),
      );
      expect(mine).toMatchObject(wanted);
    });
  }

  it('refuses ids that are not UUIDs as establish_context does, while the statement runs', async () => {
    const malformed = [
      { sub: 'not-a-uuid', role: 'authenticated', app_metadata: { organization_id: a.orgId } },
      { sub: a.owner.userId, role: 'authenticated', app_metadata: { organization_id: 'x' } },
      { ...agentPrincipal(agentKey, a.orgId, ['read']).claims, organization_id: 42 },
    ];
    for (const claims of malformed) {
      expect(await sqlstate(viaStatement(principalOf(claims)))).toBe('22P02');
      expect(await sqlstate(viaFunction(claims))).toBe('22P02');
    }
    // Another form PostgreSQL reads (upper case, braces) is read alike.
    const braced = humanPrincipal(`{${a.owner.userId.toUpperCase()}}`, a.orgId, 'owner').claims;
    expect(await viaStatement(principalOf(braced))).toEqual(await viaFunction(braced));
    expect(await viaStatement(principalOf(braced))).toMatchObject({ org_id: a.orgId, org_role: 'owner' });
  });

  it('opens only the tables of the lookup the claims name', async () => {
    const opened = (principal: Principal) =>
      fresh.db.asPrincipal(
        principal,
        async (tx) =>
          (
            await tx.query<{ t: string }>(
              `select c.relname as t from pg_locks l join pg_class c on c.oid = l.relation
                where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relkind = 'r'
                  and c.relnamespace = 'public'::regnamespace order by 1`,
            )
          ).map((r) => r.t),
        { readOnly: true },
      );
    expect(await opened(a.owner.as)).toEqual(['organization_members']);
    expect(await opened(agentPrincipal(agentKey, a.orgId, ['read']))).toEqual([
      'agent_api_keys',
      'organizations',
      'plans',
    ]);
    expect(await opened({ kind: 'anon', claims: { role: 'anon' } })).toEqual([]);
  });
});

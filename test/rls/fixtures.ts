// Seeding and calling helpers for the row-level-security tests. Seeds run with owner privileges
// (no role switch), exactly like the service's internal machinery; every assertion then runs
// through db.asPrincipal, the same path a REST, MCP or function request takes.
import { randomBytes } from 'node:crypto';
import type { Database, Principal, Row } from '../../src/platform/db/database.ts';

export type Role = 'owner' | 'admin' | 'member';
export type Member = { userId: string; as: Principal };
export type Tenant = { orgId: string; name: string; owner: Member; admin: Member; member: Member };
export type Agent = { keyId: string; prefix: string; as: Principal };

let counter = 0;
/** Unique per call and per process, so seeds never collide on unique keys. */
export const unique = (tag: string) => `${tag}-${process.pid}-${Date.now().toString(36)}-${++counter}`;

/** Claims as the token endpoint issues them for a person acting in `orgId`. */
export function humanPrincipal(userId: string, orgId: string, role: Role): Principal {
  const app_metadata = { organization_id: orgId, org_id: orgId, org_role: role };
  return { kind: 'user', userId, claims: { sub: userId, role: 'authenticated', app_metadata } };
}

/** Claims as agent-auth issues them: sub is the key's id, the organization is named twice. */
export function agentPrincipal(keyId: string, orgId: string, scopes: string[]): Principal {
  return {
    kind: 'agent',
    keyId,
    claims: {
      sub: keyId,
      role: 'authenticated',
      org_role: 'agent',
      organization_id: orgId,
      agent_scopes: scopes,
      app_metadata: { organization_id: orgId, org_role: 'agent', agent_scopes: scopes },
    },
  };
}

export const ANON: Principal = { kind: 'anon', claims: { role: 'anon' } };

export async function createUser(db: Database, tag = 'user'): Promise<string> {
  const [row] = await db.query<{ id: string }>(
    'insert into auth.users (email, encrypted_password) values ($1, $2) returning id',
    [`${unique(tag)}@example.test`, 'not-a-real-hash'],
  );
  return (row as { id: string }).id;
}

/** A new account made a member of `orgId` with `role`, and the principal it signs in as. */
export async function addMember(db: Database, orgId: string, role: Role): Promise<Member> {
  const userId = await createUser(db, role);
  await db.query('insert into organization_members (organization_id, user_id, role) values ($1, $2, $3)', [
    orgId,
    userId,
    role,
  ]);
  return { userId, as: humanPrincipal(userId, orgId, role) };
}

/**
 * An organization (its default warehouse comes from a trigger) with one owner, admin and member,
 * on the scale plan: these tests are about isolation, and the free plan's ceilings would get in
 * the way (one agent, one warehouse).
 */
export async function seedTenant(db: Database, tag = 'org'): Promise<Tenant> {
  const name = unique(tag);
  const [org] = await db.query<{ id: string }>(
    "insert into organizations (name, plan) values ($1, 'scale') returning id",
    [name],
  );
  const orgId = (org as { id: string }).id;
  const owner = await addMember(db, orgId, 'owner');
  const admin = await addMember(db, orgId, 'admin');
  const member = await addMember(db, orgId, 'member');
  return { orgId, name, owner, admin, member };
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** svc_ak_ + 5 random characters; 62^5 values make a clash within one test database negligible. */
const keyPrefix = () => `svc_ak_${[...randomBytes(5)].map((b) => ALNUM[b % ALNUM.length]).join('')}`;

/** An agent API key row in `orgId` and the principal of an agent JWT exchanged for it. */
export async function seedAgent(db: Database, orgId: string, scopes: string[]): Promise<Agent> {
  const prefix = keyPrefix();
  const [row] = await db.query<{ id: string }>(
    `insert into agent_api_keys (organization_id, name, key_prefix, key_hash, scopes, expires_at)
     values ($1, $2, $3, 'bcrypt-hash-placeholder', $4, now() + interval '90 days') returning id`,
    [orgId, unique('agent'), prefix, scopes],
  );
  const keyId = (row as { id: string }).id;
  return { keyId, prefix, as: agentPrincipal(keyId, orgId, scopes) };
}

/** One statement as `principal`, in its own transaction. */
export function as<T extends Row = Row>(
  db: Database,
  principal: Principal,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  return db.asPrincipal(principal, (tx) => tx.query<T>(sql, params));
}

/** The SQLSTATE a statement fails with; the test fails if the statement succeeds. */
export async function sqlstate(pending: Promise<unknown>): Promise<string> {
  try {
    await pending;
  } catch (err) {
    return (err as { code?: string }).code ?? `no code: ${String(err)}`;
  }
  throw new Error('expected the statement to fail, but it succeeded');
}

/** A row as the owner sees it (no RLS), to prove an attempt left it untouched. */
export async function rowAsOwner(db: Database, table: string, id: string): Promise<unknown> {
  const [row] = await db.query<{ r: unknown }>(`select to_jsonb(t) as r from ${table} t where t.id = $1`, [
    id,
  ]);
  return row?.r ?? null;
}

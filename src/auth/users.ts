import type { Queryable } from '../platform/db/database.ts';

export type UserRow = {
  id: string;
  email: string;
  encrypted_password: string;
  email_confirmed_at: Date | null;
  raw_app_meta_data: Record<string, unknown>;
  raw_user_meta_data: Record<string, unknown>;
  last_sign_in_at: Date | null;
  created_at: Date;
  updated_at: Date;
  /** The organization tokens act in, and the user's role there (from membership, not stored). */
  organization_id: string | null;
  org_role: 'owner' | 'admin' | 'member' | null;
};

// The current organization is the stored one if the user still belongs to it, else their oldest
// membership; a user removed from every organization simply has none.
const SELECT_USER = `
  select u.id, u.email, u.encrypted_password, u.email_confirmed_at, u.raw_app_meta_data,
         u.raw_user_meta_data, u.last_sign_in_at, u.created_at, u.updated_at,
         m.organization_id, m.role as org_role
    from auth.users u
    left join lateral (
      select organization_id, role from public.organization_members
       where user_id = u.id
       order by (organization_id = u.current_organization_id) desc nulls last, created_at, organization_id
       limit 1) m on true`;

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export async function findUserByEmail(tx: Queryable, email: string): Promise<UserRow | undefined> {
  return (await tx.query<UserRow>(`${SELECT_USER} where u.email = $1`, [normalizeEmail(email)]))[0];
}

export async function findUserById(tx: Queryable, id: string): Promise<UserRow | undefined> {
  return (await tx.query<UserRow>(`${SELECT_USER} where u.id = $1`, [id]))[0];
}

export async function insertUser(
  tx: Queryable,
  input: { email: string; passwordHash: string; userMetadata: Record<string, unknown> },
): Promise<string> {
  const [row] = await tx.query<{ id: string }>(
    `insert into auth.users (email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
     values ($1, $2, now(), $3, $4) returning id`,
    [
      normalizeEmail(input.email),
      input.passwordHash,
      JSON.stringify({ provider: 'email', providers: ['email'] }),
      JSON.stringify(input.userMetadata),
    ],
  );
  return (row as { id: string }).id;
}

export async function setCurrentOrganization(tx: Queryable, userId: string, organizationId: string | null) {
  await tx.query('update auth.users set current_organization_id = $2 where id = $1', [
    userId,
    organizationId,
  ]);
}

/**
 * A new password and/or metadata. A new password ends every other session of the user, as GoTrue
 * does: whoever learned the old password loses their sessions with it.
 */
export async function updateUser(
  tx: Queryable,
  user: { id: string; sessionId: string },
  change: { passwordHash?: string; metadata?: Record<string, unknown> },
) {
  await tx.query(
    `update auth.users
        set encrypted_password = coalesce($2, encrypted_password),
            raw_user_meta_data = coalesce($3::jsonb, raw_user_meta_data)
      where id = $1`,
    [user.id, change.passwordHash ?? null, change.metadata ? JSON.stringify(change.metadata) : null],
  );
  if (change.passwordHash) {
    await tx.query('delete from auth.sessions where user_id = $1 and id <> $2::uuid', [
      user.id,
      user.sessionId,
    ]);
  }
}

export function appMetadata(user: UserRow): Record<string, unknown> {
  const org = user.organization_id
    ? { organization_id: user.organization_id, org_id: user.organization_id, org_role: user.org_role }
    : {};
  return { provider: 'email', providers: ['email'], ...user.raw_app_meta_data, ...org };
}

/** The user object GoTrue sends, which @supabase/auth-js expects field for field. */
export function userJson(user: UserRow) {
  const confirmed = user.email_confirmed_at?.toISOString() ?? null;
  return {
    id: user.id,
    aud: 'authenticated',
    role: 'authenticated',
    email: user.email,
    email_confirmed_at: confirmed,
    phone: '',
    confirmed_at: confirmed,
    last_sign_in_at: user.last_sign_in_at?.toISOString() ?? null,
    app_metadata: appMetadata(user),
    user_metadata: user.raw_user_meta_data,
    identities: [],
    created_at: user.created_at.toISOString(),
    updated_at: user.updated_at.toISOString(),
    is_anonymous: false,
  };
}

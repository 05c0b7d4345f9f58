import type { Principal, Queryable } from '../platform/db/database.ts';
import { forbidden, noOrganization, notFound, unknownPlan } from '../platform/errors.ts';
import type { Deps } from './deps.ts';

export type Organization = {
  id: string;
  name: string;
  plan: string;
  country: string | null;
  created_at: Date;
  updated_at: Date;
};
export type OrgRole = 'owner' | 'admin' | 'member';

const ORG_COLUMNS = 'id, name, plan, country, created_at, updated_at';

/**
 * A new organization on the free plan with `ownerUserId` as its owner. Runs with owner privileges
 * inside the caller's transaction: nobody can insert organizations through row-level security.
 */
export async function createOrganization(
  tx: Queryable,
  input: { name: string; ownerUserId: string; country?: string | null },
) {
  const [org] = await tx.query<Organization>(
    `insert into public.organizations (name, created_by, country) values ($1, $2, $3) returning ${ORG_COLUMNS}`,
    [input.name.trim(), input.ownerUserId, input.country ?? null],
  );
  const created = org as Organization;
  await tx.query(
    `insert into public.organization_members (organization_id, user_id, role) values ($1, $2, 'owner')`,
    [created.id, input.ownerUserId],
  );
  return created;
}

export type Member = { user_id: string; email: string; role: OrgRole; created_at: Date };

/** One page of the current organization's roster, oldest member first, and the roster's size. */
export async function membersPage(tx: Queryable, page: { limit: number; offset: number }) {
  const [count] = await tx.query<{ n: number }>(
    'select count(*)::int as n from public.organization_members where organization_id = app.current_org_id()',
  );
  const members = await tx.query<Member>(
    `select m.user_id, d.email, m.role, m.created_at
       from public.organization_members m
       join app.member_directory() d on d.user_id = m.user_id
      where m.organization_id = app.current_org_id()
      order by m.created_at, m.user_id
      limit $1 offset $2`,
    [page.limit, page.offset],
  );
  return { members, total: count?.n ?? 0 };
}

export async function removeMember(deps: Pick<Deps, 'db'>, principal: Principal, userId: string) {
  await deps.db.asPrincipal(principal, async (tx) => {
    await requireCurrentOrg(tx);
    await requireOrgAdmin(tx, 'Only owners and admins may remove members');
    const removed = await tx.query(
      'delete from public.organization_members where organization_id = app.current_org_id() and user_id = $1 returning user_id',
      [userId],
    );
    if (removed.length === 0) throw notFound('member in this organization');
  });
}

/**
 * A member's new role. Owners and admins change roles; only owners make or unmake owners, and the
 * last owner stays one (app.guard_owners). Takes effect at the member's next request: their role
 * is read from the roster each time, not from their token.
 */
export async function changeRole(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  userId: string,
  role: 'owner' | 'admin' | 'member',
) {
  return deps.db.asPrincipal(principal, async (tx) => {
    await requireCurrentOrg(tx);
    await requireOrgAdmin(tx, 'Only owners and admins may change roles');
    // app.guard_owners refuses it anyway; asked first so the refusal says why.
    const [me] = await tx.query<{ owner: boolean; target: string | null }>(
      `select app.org_role() = 'owner' as owner,
              (select role from public.organization_members
                where organization_id = app.current_org_id() and user_id = $1) as target`,
      [userId],
    );
    if (!me?.owner && (role === 'owner' || me?.target === 'owner'))
      throw forbidden('Only an owner may make someone an owner or change an owner’s role');
    const [member] = await tx.query<Member>(
      `with changed as (
         update public.organization_members set role = $2
          where organization_id = app.current_org_id() and user_id = $1
          returning user_id, role, created_at)
       select c.user_id, d.email, c.role, c.created_at
         from changed c join app.member_directory() d on d.user_id = c.user_id`,
      [userId, role],
    );
    if (!member) throw notFound('member in this organization');
    return member;
  });
}

/** Requests that act in "the current organization" need one: a person may have none yet. */
export async function requireCurrentOrg(tx: Queryable): Promise<string> {
  const [row] = await tx.query<{ id: string | null }>('select app.current_org_id() as id');
  if (!row?.id) throw noOrganization();
  return row.id;
}

// Asked first only to choose between 403 and 404; row-level security is what refuses the write.
export async function isOrgAdmin(tx: Queryable): Promise<boolean> {
  const [row] = await tx.query<{ ok: boolean }>('select app.is_org_admin() as ok');
  return row?.ok === true;
}

/** Refuses (403 with `message`) a caller who is not an owner or admin of the current organization. */
export async function requireOrgAdmin(tx: Queryable, message: string): Promise<void> {
  if (!(await isOrgAdmin(tx))) throw forbidden(message);
}

/** Moves an organization to another plan and returns it with the plan's limits. */
export async function setPlan(tx: Queryable, organizationId: string, plan: string) {
  const plans = await tx.query<{ slug: string }>('select slug from public.plans order by rank');
  if (!plans.some((p) => p.slug === plan))
    throw unknownPlan(
      plan,
      plans.map((p) => p.slug),
    );
  const [row] = await tx.query<Organization & { plan_limits: Record<string, unknown> }>(
    `with o as (update public.organizations set plan = $2 where id = $1 returning ${ORG_COLUMNS})
     select o.*, app.plan_limits(p) as plan_limits from o join public.plans p on p.slug = o.plan`,
    [organizationId, plan],
  );
  if (!row) throw notFound('organization');
  const { plan_limits, ...organization } = row;
  return { organization, plan_limits };
}

import type { Principal } from '../platform/db/database.ts';
import { alreadyMember, forbidden, notFound } from '../platform/errors.ts';
import type { Mail } from '../platform/mail/mailer.ts';
import { hashOpaqueToken, newOpaqueToken } from '../platform/opaque-token.ts';
import type { Deps } from './deps.ts';
import {
  isOrgAdmin,
  type Member,
  membersPage,
  type OrgRole,
  requireCurrentOrg,
  requireOrgAdmin,
} from './organizations.ts';

// Members join by invitation (migrations/0008_invitations.sql holds
// the rules): owners and admins invite an email, the person holding an account with that email
// and the token from the mail accepts or declines. Nothing here depends on whether the email has
// an account, so an inviter cannot tell.

export type Invitation = {
  id: string;
  organization_id: string;
  email: string;
  role: OrgRole;
  invited_by: string | null;
  expires_at: Date;
  created_at: Date;
  status: 'pending' | 'expired';
};

const INVITATION_COLUMNS = `id, organization_id, email, role, invited_by, expires_at, created_at,
  case when expires_at > now() then 'pending' else 'expired' end as status`;

/** What the invitation mail needs besides the invitation; `token` exists only here and in the mail. */
export type Invited = {
  invitation: Invitation;
  token: string;
  organizationName: string;
  inviterEmail: string;
};

/**
 * Invites `email` to the current organization, or refreshes the pending invitation it already has
 * (new role, inviter and seven more days): one invitation per email, so a second invite never
 * makes a second one. An email already on the roster is refused (409 already_member): the inviter
 * sees the roster's emails anyway, so this tells them nothing about who has an account. Each call
 * issues a new token (the older mail's link dies). `admit` runs once the caller may invite, before
 * anything is written: the sending limits, so a refused caller spends nobody's budget.
 */
export async function invite(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  input: { email: string; role: OrgRole },
  admit: () => Promise<void> = async () => {},
): Promise<Invited> {
  return deps.db.asPrincipal(principal, async (tx) => {
    await requireCurrentOrg(tx);
    await requireOrgAdmin(tx, 'Only owners and admins may invite members');
    const [role] = await tx.query<{ r: string }>('select app.org_role() as r');
    if (input.role === 'owner' && role?.r !== 'owner') throw forbidden('Only an owner may invite an owner');
    const [member] = await tx.query<{ yes: boolean }>('select app.is_member_email($1) as yes', [input.email]);
    if (member?.yes) throw alreadyMember(input.email);
    await admit();
    const [invitation] = await tx.query<Invitation>(
      // The database makes the caller the inviter and starts the seven days (app.prepare_invitation).
      `insert into public.organization_invitations (organization_id, email, role)
       values (app.current_org_id(), $1, $2)
       on conflict (organization_id, email) do update set role = excluded.role
       returning ${INVITATION_COLUMNS}`,
      [input.email, input.role],
    );
    const { token, hash } = newOpaqueToken();
    await tx.query('select app.issue_invitation_token($1, $2)', [invitation?.id, hash]);
    const [about] = await tx.query<{ name: string; inviter: string }>(
      'select o.name, app.caller_email() as inviter from public.organizations o where o.id = app.current_org_id()',
    );
    return {
      invitation: invitation as Invitation,
      token,
      organizationName: about?.name ?? '',
      inviterEmail: about?.inviter ?? '',
    };
  });
}

/**
 * A page of the current organization's members and, for owners and admins, all its open
 * invitations (pending and expired, oldest first); members see no invitations.
 */
export async function roster(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  page: { limit: number; offset: number },
): Promise<{ members: Member[]; total: number; invitations?: Invitation[] }> {
  return deps.db.asPrincipal(
    principal,
    async (tx) => {
      await requireCurrentOrg(tx);
      const { members, total } = await membersPage(tx, page);
      if (!(await isOrgAdmin(tx))) return { members, total };
      const invitations = await tx.query<Invitation>(
        `select ${INVITATION_COLUMNS} from public.organization_invitations
          where organization_id = app.current_org_id() order by created_at, id`,
      );
      return { members, total, invitations };
    },
    { readOnly: true },
  );
}

export async function withdrawInvitation(deps: Pick<Deps, 'db'>, principal: Principal, invitationId: string) {
  await deps.db.asPrincipal(principal, async (tx) => {
    await requireCurrentOrg(tx);
    await requireOrgAdmin(tx, 'Only owners and admins may withdraw invitations');
    const gone = await tx.query(
      'delete from public.organization_invitations where organization_id = app.current_org_id() and id = $1 returning id',
      [invitationId],
    );
    if (gone.length === 0) throw notFound('invitation in this organization');
  });
}

export type MyInvitation = {
  id: string;
  organization_id: string;
  organization_name: string;
  role: OrgRole;
  invited_by_email: string | null;
  expires_at: Date;
  created_at: Date;
};

/** Pending invitations addressed to the caller's email, whatever organization they act in. */
export async function myInvitations(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  page: { limit: number; offset: number },
): Promise<{ invitations: MyInvitation[]; total: number }> {
  return deps.db.asPrincipal(
    principal,
    async (tx) => {
      const rows = await tx.query<MyInvitation & { total: number }>(
        'select i.*, (count(*) over ())::int as total from app.my_invitations() i limit $1 offset $2',
        [page.limit, page.offset],
      );
      const total =
        rows[0]?.total ??
        (await tx.query<{ n: number }>('select count(*)::int as n from app.my_invitations()'))[0]?.n ??
        0;
      return { invitations: rows.map(({ total: _, ...i }) => i), total };
    },
    { readOnly: true },
  );
}

export type Accepted = { organization: { id: string; name: string }; role: OrgRole };

/**
 * Accepting makes the caller a member with the invited role (a membership they already have stays
 * as it is); declining deletes the invitation. Both need the token from the newest mail. An
 * invitation addressed to someone else, expired, already answered, or named with a wrong token is
 * 404, the same as one that never existed.
 */
export async function answerInvitation(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  answer: { invitationId: string; token: string; action: 'accept' | 'decline' },
): Promise<Accepted | null> {
  const params = [answer.invitationId, hashOpaqueToken(answer.token)];
  return deps.db.asPrincipal(principal, async (tx) => {
    if (answer.action === 'decline') {
      const [r] = await tx.query<{ ok: boolean }>('select app.decline_invitation($1, $2) as ok', params);
      if (!r?.ok) throw notFound('invitation for you');
      return null;
    }
    const [joined] = await tx.query<{ organization_id: string; role: OrgRole }>(
      'select organization_id, role from app.accept_invitation($1, $2)',
      params,
    );
    if (!joined) throw notFound('invitation for you');
    const [org] = await tx.query<{ id: string; name: string }>(
      'select id, name from public.organizations where id = $1',
      [joined.organization_id],
    );
    return { organization: org ?? { id: joined.organization_id, name: '' }, role: joined.role };
  });
}

/**
 * Where an invitation mail leads: the site's `/invitations` page with the invitation and its token
 * in the fragment (`#invitation_id=…&token=…`), which browsers never send to a server, so the
 * token stays out of access logs and Referer headers; the page posts both to `invitations`.
 */
export function invitationLink(siteUrl: string, invitationId: string, token: string): string {
  return `${siteUrl}/invitations#${new URLSearchParams({ invitation_id: invitationId, token })}`;
}

/** The mail an invitee gets: who invites them where, and the link that answers (signed in). */
export function invitationMail(invited: Invited, siteUrl: string): Mail {
  const { invitation: i, organizationName, inviterEmail } = invited;
  const expires = i.expires_at.toISOString().slice(0, 10);
  const link = invitationLink(siteUrl, i.id, invited.token);
  return {
    to: i.email,
    subject: `You are invited to join ${organizationName}`,
    link,
    text: [
      `${inviterEmail} invited you to join ${organizationName} as ${i.role === 'admin' ? 'an' : 'a'} ${i.role}.`,
      '',
      'To accept or decline, follow this link and sign in with this email address',
      `(${i.email}), or sign up with it if you have no account yet:`,
      link,
      '',
      'Nobody joins you to an organization without your answer. The link works only for the newest',
      `invitation mail and expires on ${expires} (UTC). If you do not know ${organizationName}, ignore this mail.`,
    ].join('\n'),
  };
}

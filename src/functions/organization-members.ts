import { createRoute, z } from '@hono/zod-openapi';
import { invitationMail, invite, roster, withdrawInvitation } from '../domain/invitations.ts';
import { changeRole, type Member, removeMember } from '../domain/organizations.ts';
import { requireUser } from '../platform/http/authenticate.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import { hitEach } from '../platform/rate-limit.ts';
import type { Services } from '../services.ts';
import { listEnvelope, listSchema, PageQuery, pageWindow } from './list-envelope.ts';
import { InvitationSchema, invitationJson, iso, MemberSchema } from './schemas.ts';

const path = '/organization-members';
const memberJson = (m: Member) => ({ ...m, created_at: iso(m.created_at) });

const list = createRoute({
  method: 'get',
  path,
  summary: 'Members of the current organization, and its invitations for owners and admins',
  request: { query: PageQuery },
  responses: {
    200: jsonResponse(
      listSchema(MemberSchema).extend({ invitations: z.array(InvitationSchema).optional() }),
      'Members (paged); `invitations` (all open ones, owners and admins only)',
    ),
    ...errorResponses(400, 401, 403),
  },
});

const add = createRoute({
  method: 'post',
  path,
  summary: 'Invite an email to the current organization (owners and admins)',
  description:
    'Creates an invitation valid for 7 days and mails it; the person joins only by accepting it (`invitations`). ' +
    'The answer is the same whether or not the email has an account. Inviting an email with a pending ' +
    'invitation refreshes it (role, inviter, 7 more days). Only an owner may invite an owner. An email already ' +
    'on the roster is 409 `already_member`. At most INVITES_PER_USER_PER_HOUR invitations per inviter, ' +
    'INVITES_PER_ORG_PER_HOUR per organization and INVITES_PER_EMAIL_PER_HOUR to one email, re-sends included (429).',
  request: jsonBody(
    z.object({
      email: z.string().trim().toLowerCase().pipe(z.email()).pipe(z.string().max(320)),
      role: z.enum(['owner', 'admin', 'member']),
    }),
  ),
  responses: { 201: jsonResponse(InvitationSchema, 'Invited'), ...errorResponses(400, 401, 403, 409, 429) },
});

const remove = createRoute({
  method: 'delete',
  path,
  summary: 'Remove a member, or withdraw an invitation (owners and admins)',
  description:
    '`{user_id}` removes a member (never the last owner); `{invitation_id}` withdraws an invitation.',
  request: jsonBody(
    z.union([z.strictObject({ user_id: z.uuid() }), z.strictObject({ invitation_id: z.uuid() })]),
  ),
  responses: { 204: { description: 'Removed' }, ...errorResponses(400, 401, 403, 404, 409) },
});

const change = createRoute({
  method: 'patch',
  path,
  summary: 'Change a member’s role (owners and admins)',
  description:
    '`{user_id, role}`: only owners make or unmake owners (403), and the last owner stays one (409 `last_owner`). ' +
    'The member’s new role applies from their next request.',
  request: jsonBody(z.strictObject({ user_id: z.uuid(), role: z.enum(['owner', 'admin', 'member']) })),
  responses: { 200: jsonResponse(MemberSchema, 'The member'), ...errorResponses(400, 401, 403, 404, 409) },
});

export function organizationMembers(s: Services) {
  const siteUrl = s.config.siteUrl ?? s.publicUrl;
  return newRouter()
    .openapi(list, async (c) => {
      const principal = requireUser(c.get('principal'));
      const page = c.req.valid('query');
      const { members, total, invitations } = await roster(s, principal, pageWindow(page));
      const body = listEnvelope(members.map(memberJson), page, total);
      return c.json(invitations ? { ...body, invitations: invitations.map(invitationJson) } : body, 200);
    })
    .openapi(add, async (c) => {
      const principal = requireUser(c.get('principal'));
      const input = c.req.valid('json');
      // Each invitation is a mail to an address of the inviter's choosing. Counted only once the
      // caller may invite (a member cannot spend the owners' budget): per inviter across all their
      // organizations (anyone can make organizations), per organization, and per recipient (a
      // re-sent invitation is a mail too). Refused attempts count for the limits before the refusing one.
      const invited = await invite(s, principal, input, async () => {
        const org = (principal.claims.app_metadata as { organization_id?: string } | undefined)
          ?.organization_id as string; // invite has checked the caller acts in one
        await hitEach([
          [s.limits.invitesPerUser, principal.userId, 'invitations from you'],
          [s.limits.invitesPerOrg, org, 'invitations from this organization'],
          [s.limits.invitesPerEmail, input.email, 'invitations to this email'],
        ]);
      });
      s.mail.post(invitationMail(invited, siteUrl));
      return c.json(invitationJson(invited.invitation), 201);
    })
    .openapi(change, async (c) => {
      const { user_id, role } = c.req.valid('json');
      return c.json(memberJson(await changeRole(s, requireUser(c.get('principal')), user_id, role)), 200);
    })
    .openapi(remove, async (c) => {
      const principal = requireUser(c.get('principal'));
      const body = c.req.valid('json');
      if ('user_id' in body) await removeMember(s, principal, body.user_id);
      else await withdrawInvitation(s, principal, body.invitation_id);
      return c.body(null, 204);
    });
}

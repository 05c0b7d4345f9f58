import { createRoute, z } from '@hono/zod-openapi';
import { addMember, listMembers, type Member, removeMember } from '../domain/organizations.ts';
import { requireUser } from '../platform/http/authenticate.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { listEnvelope, listSchema, PageQuery, pageWindow } from './list-envelope.ts';
import { iso, MemberSchema } from './schemas.ts';

const path = '/organization-members';
const memberJson = (m: Member) => ({ ...m, created_at: iso(m.created_at) });

const list = createRoute({
  method: 'get',
  path,
  summary: 'Members of the current organization',
  request: { query: PageQuery },
  responses: { 200: jsonResponse(listSchema(MemberSchema), 'Members'), ...errorResponses(400, 401, 403) },
});

const add = createRoute({
  method: 'post',
  path,
  summary: 'Add an existing account to the current organization (owners and admins)',
  description: 'Only an owner may add another owner.',
  request: jsonBody(
    z.object({
      email: z.string().trim().toLowerCase().pipe(z.email()),
      role: z.enum(['owner', 'admin', 'member']),
    }),
  ),
  responses: { 201: jsonResponse(MemberSchema, 'Added'), ...errorResponses(400, 401, 403, 404, 409) },
});

const remove = createRoute({
  method: 'delete',
  path,
  summary: 'Remove a member (owners and admins); the last owner cannot be removed',
  request: jsonBody(z.object({ user_id: z.uuid() })),
  responses: { 204: { description: 'Removed' }, ...errorResponses(400, 401, 403, 404, 409) },
});

export function organizationMembers(s: Services) {
  return newRouter()
    .openapi(list, async (c) => {
      const principal = requireUser(c.get('principal'));
      const page = c.req.valid('query');
      const { members, total } = await listMembers(s.db, principal, pageWindow(page));
      return c.json(listEnvelope(members.map(memberJson), page, total), 200);
    })
    .openapi(add, async (c) => {
      const principal = requireUser(c.get('principal'));
      return c.json(memberJson(await addMember(s.db, principal, c.req.valid('json'))), 201);
    })
    .openapi(remove, async (c) => {
      const principal = requireUser(c.get('principal'));
      await removeMember(s.db, principal, c.req.valid('json').user_id);
      return c.body(null, 204);
    });
}

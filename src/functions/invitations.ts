import { createRoute, z } from '@hono/zod-openapi';
import { answerInvitation, myInvitations } from '../domain/invitations.ts';
import { requireUser } from '../platform/http/authenticate.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { listEnvelope, listSchema, PageQuery, pageWindow } from './list-envelope.ts';
import { invitationJson, MyInvitationSchema } from './schemas.ts';

const path = '/invitations';

const list = createRoute({
  method: 'get',
  path,
  summary: 'Pending invitations addressed to your email',
  request: { query: PageQuery },
  responses: {
    200: jsonResponse(listSchema(MyInvitationSchema), 'Invitations'),
    ...errorResponses(400, 401, 403),
  },
});

const answer = createRoute({
  method: 'post',
  path,
  summary: 'Accept or decline an invitation',
  description:
    'Accepting makes you a member with the invited role (a membership you already have stays as it is); act in ' +
    'the organization with `organization-switch`. Both answers need `token`, from the link in the newest ' +
    'invitation mail (`#invitation_id=…&token=…`). An invitation that is not yours, expired, already answered ' +
    'or named with a wrong token is 404.',
  request: jsonBody(
    z.object({
      invitation_id: z.uuid(),
      action: z.enum(['accept', 'decline']),
      // Optional in the schema so that a missing token is the same 404 as a wrong one.
      token: z.string().max(200).optional(),
    }),
  ),
  responses: {
    200: jsonResponse(
      z.object({
        action: z.enum(['accept', 'decline']),
        organization: z.object({ id: z.uuid(), name: z.string() }).optional(),
        role: z.enum(['owner', 'admin', 'member']).optional(),
      }),
      'Answered',
    ),
    ...errorResponses(400, 401, 403, 404),
  },
});

export function invitations(s: Services) {
  return newRouter()
    .openapi(list, async (c) => {
      const principal = requireUser(c.get('principal'));
      const page = c.req.valid('query');
      const { invitations: rows, total } = await myInvitations(s, principal, pageWindow(page));
      return c.json(listEnvelope(rows.map(invitationJson), page, total), 200);
    })
    .openapi(answer, async (c) => {
      const principal = requireUser(c.get('principal'));
      const { invitation_id, action, token } = c.req.valid('json');
      const accepted = await answerInvitation(s, principal, {
        invitationId: invitation_id,
        token: token ?? '',
        action,
      });
      return c.json({ action, ...accepted }, 200);
    });
}

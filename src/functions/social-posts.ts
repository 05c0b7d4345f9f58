import { createRoute, z } from '@hono/zod-openapi';
import { POST_STATUSES, SOCIAL_PLATFORMS } from '../domain/social.ts';
import {
  contentCalendar,
  createSocialPost,
  deleteSocialPost,
  NewSocialPost,
  pageSocialPosts,
  type SocialDeps,
  SocialPostChanges,
  updateSocialPost,
} from '../domain/social-posts.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import { listEnvelope, listSchema, PageQuery, pageWindow } from './list-envelope.ts';

// /functions/v1/social-posts and /functions/v1/content-calendar (docs/social.md): what the MCP
// social tools do, for people (and agents) over HTTP, with the same rules from the domain.

const path = '/social-posts';
const Post = z.record(z.string(), z.unknown()).openapi('SocialPost');
const ERRORS = [400, 401, 403, 409] as const;

const list = createRoute({
  method: 'get',
  path,
  summary: 'The organization’s social posts, newest first (list envelope)',
  request: {
    query: PageQuery.extend({
      status: z.enum(POST_STATUSES).optional(),
      platform: z.enum(SOCIAL_PLATFORMS).optional(),
      account_id: z.uuid().optional(),
      from: z.iso.datetime({ offset: true }).optional(),
      to: z.iso.datetime({ offset: true }).optional(),
    }),
  },
  responses: { 200: jsonResponse(listSchema(Post), 'Posts'), ...errorResponses(...ERRORS) },
});

const create = createRoute({
  method: 'post',
  path,
  summary: 'Create a draft, or a scheduled post when scheduled_at is given',
  description:
    'media_urls are downloaded into the social-media bucket (https only, types and sizes of svc://schema/social, ' +
    'checked by content); a refused URL refuses the post and leaves nothing behind.',
  request: jsonBody(NewSocialPost),
  responses: { 201: jsonResponse(Post, 'Created'), ...errorResponses(...ERRORS) },
});

const update = createRoute({
  method: 'patch',
  path,
  summary:
    'Edit a draft or scheduled post, schedule it (scheduled_at), or cancel it back to draft (cancel: true)',
  request: jsonBody(SocialPostChanges),
  responses: { 200: jsonResponse(Post, 'Updated'), ...errorResponses(...ERRORS, 404) },
});

const remove = createRoute({
  method: 'delete',
  path,
  summary: 'Delete a draft or scheduled post and its media',
  request: jsonBody(z.strictObject({ id: z.uuid() })),
  responses: { 200: jsonResponse(Post, 'Deleted'), ...errorResponses(...ERRORS, 404) },
});

const calendar = createRoute({
  method: 'get',
  path: '/content-calendar',
  summary: 'Scheduled and published posts between two instants, grouped by day in a time zone',
  request: {
    query: z.object({
      from: z.iso.datetime({ offset: true }),
      to: z.iso.datetime({ offset: true }),
      timezone: z.string().max(64).default('UTC'),
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({ timezone: z.string(), days: z.array(z.object({ day: z.string(), posts: z.array(Post) })) }),
      'Calendar',
    ),
    ...errorResponses(...ERRORS),
  },
});

export function socialPosts(deps: SocialDeps) {
  return newRouter()
    .openapi(list, async (c) => {
      const { page, per_page, status, ...filter } = c.req.valid('query');
      const { posts, total } = await pageSocialPosts(
        deps,
        c.get('principal'),
        { ...filter, status: status ? [status] : undefined },
        pageWindow({ page, per_page }),
      );
      return c.json(listEnvelope(posts, { page, per_page }, total), 200);
    })
    .openapi(create, async (c) =>
      c.json(await createSocialPost(deps, c.get('principal'), c.req.valid('json')), 201),
    )
    .openapi(update, async (c) => {
      const { post } = await updateSocialPost(deps, c.get('principal'), c.req.valid('json'));
      return c.json(post, 200);
    })
    .openapi(remove, async (c) =>
      c.json(await deleteSocialPost(deps, c.get('principal'), c.req.valid('json').id), 200),
    )
    .openapi(calendar, async (c) =>
      c.json(await contentCalendar(deps, c.get('principal'), c.req.valid('query')), 200),
    );
}

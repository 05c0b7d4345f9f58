import { z } from 'zod';
import { POST_STATUSES, SOCIAL_PLATFORMS, WRITABLE_PLATFORMS } from '../../domain/social.ts';
import {
  contentCalendar,
  createSocialPost,
  deleteSocialPost,
  getSocialPost,
  listSocialAccounts,
  listSocialPosts,
  NewSocialPost,
  requireSocialPlan,
  SocialPostChanges,
  socialAnalytics,
  updateSocialPost,
} from '../../domain/social-posts.ts';
import { defineTool, type ToolContext } from '../tool.ts';
import { CREATE, cursor, dateOrTime, limit, nextCursor, orderedRange, READ, UPDATE } from './common.ts';

// The eight social tools (spec 4.6, docs/social.md). Each answers plan_required on free plans
// before anything else (the precheck), and social_not_configured without a connected Facebook or
// Instagram account. The rules and media constraints are in svc://schema/social, not repeated here.

const post = z.record(z.string(), z.unknown());
const precheck = ({ s, principal }: ToolContext) => requireSocialPlan(s, principal);
const when = () => dateOrTime();

export const listSocialPostsTool = defineTool({
  name: 'svc_list_social_posts',
  title: 'List social posts',
  description:
    'Social posts newest first, filtered by status, platform, account and calendar time (from/to). Returns {posts, next_cursor}.',
  scope: 'read',
  input: z.strictObject({
    status: z.enum(POST_STATUSES).optional(),
    platform: z.enum(SOCIAL_PLATFORMS).optional(),
    account_id: z.guid().optional(),
    from: when().optional(),
    to: when().optional(),
    limit: limit(),
    cursor: cursor(),
  }),
  output: z.object({ posts: z.array(post), next_cursor: nextCursor() }),
  annotations: READ,
  precheck,
  run: ({ s, principal }, { status, ...f }) => {
    orderedRange(f.from, f.to, ['from', 'to']);
    return listSocialPosts(s, principal, { ...f, status: status ? [status] : undefined });
  },
});

export const getSocialPostTool = defineTool({
  name: 'svc_get_social_post',
  title: 'Get a social post',
  description:
    'One social post by id with its media (each with a signed_url valid 1 h), schedule, and the provider’s id and link once published. Returns {post}.',
  scope: 'read',
  input: z.strictObject({ id: z.guid() }),
  output: z.object({ post }),
  annotations: READ,
  precheck,
  run: async ({ s, principal }, { id }) => ({ post: await getSocialPost(s, principal, id) }),
});

export const createSocialPostTool = defineTool({
  name: 'svc_create_social_post',
  title: 'Create a social post',
  description:
    'A Facebook or Instagram post: scheduled when scheduled_at is given, else a draft. media_urls are downloaded (limits: svc://schema/social). Returns {post}.',
  scope: 'write',
  input: NewSocialPost.extend({
    account_id: NewSocialPost.shape.account_id.describe('needed when several fit'),
  }),
  output: z.object({ post }),
  annotations: CREATE,
  precheck,
  run: async ({ s, principal }, args) => ({ post: await createSocialPost(s, principal, args) }),
});

export const updateSocialPostTool = defineTool({
  name: 'svc_update_social_post',
  title: 'Update a social post',
  description:
    'Edit a draft or scheduled post; scheduled_at schedules it, cancel: true makes it a draft again. media_urls replace the media. Returns {post, previous_status}.',
  scope: 'write',
  input: SocialPostChanges,
  output: z.object({ post, previous_status: z.string() }),
  annotations: UPDATE,
  precheck,
  run: ({ s, principal }, args) => updateSocialPost(s, principal, args),
});

export const deleteSocialPostTool = defineTool({
  name: 'svc_delete_social_post',
  title: 'Delete a social post',
  description:
    'Delete a draft or scheduled post and its media files; published and failed posts stay. Returns {deleted: id}.',
  scope: 'write',
  input: z.strictObject({ id: z.guid() }),
  output: z.object({ deleted: z.guid() }),
  annotations: { destructiveHint: true, idempotentHint: true },
  precheck,
  run: async ({ s, principal }, { id }) => ({
    deleted: (await deleteSocialPost(s, principal, id)).id,
  }),
});

export const listSocialAccountsTool = defineTool({
  name: 'svc_list_social_accounts',
  title: 'List social accounts',
  description:
    'The connected Facebook Pages and Instagram accounts posts go out on; a create’s account_id names one. Returns {accounts}.',
  scope: 'read',
  input: z.strictObject({}),
  output: z.object({ accounts: z.array(z.record(z.string(), z.unknown())) }),
  annotations: READ,
  precheck,
  run: async ({ s, principal }) => ({ accounts: await listSocialAccounts(s, principal) }),
});

export const contentCalendarTool = defineTool({
  name: 'svc_get_content_calendar',
  title: 'Get the content calendar',
  description:
    'Scheduled and published posts from from to to, grouped by day in timezone. Returns {timezone, days}.',
  scope: 'read',
  input: z.strictObject({
    from: when(),
    to: when(),
    timezone: z.string().max(64).default('UTC').describe('IANA, e.g. Europe/Paris'),
  }),
  output: z.object({
    timezone: z.string(),
    days: z.array(z.object({ day: z.string(), posts: z.array(post) })),
  }),
  annotations: READ,
  precheck,
  run: ({ s, principal }, args) => contentCalendar(s, principal, args),
});

export const socialAnalyticsTool = defineTool({
  name: 'svc_get_social_analytics',
  title: 'Get social analytics',
  description:
    'Engagement of posts published from from to to: per platform the post count and summed metrics (Meta’s names), and each post’s latest figures. Returns {platforms, posts}.',
  scope: 'read',
  input: z.strictObject({
    from: when(),
    to: when(),
    platform: z.enum(WRITABLE_PLATFORMS).optional(),
    limit: limit(),
  }),
  output: z.object({
    from: z.string(),
    to: z.string(),
    platforms: z.array(z.record(z.string(), z.unknown())),
    posts: z.array(post),
  }),
  annotations: READ,
  precheck,
  run: ({ s, principal }, args) => socialAnalytics(s, principal, args),
});

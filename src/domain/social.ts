import { z } from 'zod';

// The social calendar's rules (spec 2.4, docs/decisions.md "Social posts"). The social tools come
// with a later issue; svc://schema/social already describes what they will accept, from here.

export const SOCIAL_PLATFORMS = ['twitter', 'linkedin', 'instagram', 'facebook'] as const;
/** Writable post creation is backed by the Facebook/Meta storage model only (spec 2.4). */
export const WRITABLE_PLATFORMS = ['facebook'] as const;

export const POST_STATUSES = ['draft', 'scheduled', 'publishing', 'published', 'failed'] as const;
export const POST_TRANSITIONS: Record<(typeof POST_STATUSES)[number], string[]> = {
  draft: ['scheduled'],
  scheduled: ['draft', 'publishing'],
  publishing: ['published', 'failed'],
  published: [],
  failed: [],
};
export const EDITABLE_POST_STATUSES = ['draft', 'scheduled'] as const;
export const SOCIAL_MINIMUM_PLAN = 'starter';
export const MAX_SCHEDULE_AHEAD_DAYS = 365;

/** What a post's media_urls may point at; files are downloaded into the social media bucket. */
export const MEDIA_CONSTRAINTS = {
  max_items_per_post: 10,
  url_schemes: ['https'],
  types: {
    image: {
      mime_types: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'],
      max_bytes: 10 * 1024 * 1024,
    },
    video: { mime_types: ['video/mp4', 'video/quicktime'], max_bytes: 1024 * 1024 * 1024 },
  },
  max_message_chars: 63206,
};

export const SocialPost = z
  .object({
    id: z.guid(),
    organization_id: z.guid(),
    platform: z.enum(SOCIAL_PLATFORMS),
    status: z.enum(POST_STATUSES),
    message: z.string().max(MEDIA_CONSTRAINTS.max_message_chars).nullable(),
    media_urls: z.array(z.string()).max(MEDIA_CONSTRAINTS.max_items_per_post),
    scheduled_at: z
      .string()
      .nullable()
      .describe('When the publisher posts it (ISO 8601, UTC); null for drafts'),
    published_at: z.string().nullable(),
    error: z.string().nullable().describe('The provider’s error for failed posts'),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .describe('A post on the organization’s content calendar');

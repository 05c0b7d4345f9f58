import { z } from 'zod';
import { MEDIA_KINDS } from '../platform/media-type.ts';

// The social calendar's rules (spec 2.4, docs/decisions.md "Social posts", docs/social.md), as
// svc://schema/social describes them; the database enforces the lifecycle (migrations/0022).

export const SOCIAL_PLATFORMS = ['twitter', 'linkedin', 'instagram', 'facebook'] as const;
/** Writable post creation is backed by the Facebook/Meta model only (spec 2.4): Pages and Instagram accounts. */
export const WRITABLE_PLATFORMS = ['facebook', 'instagram'] as const;

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
  /** The types the service recognises by their bytes, and the largest of each (src/platform/media-type.ts). */
  types: MEDIA_KINDS,
  max_message_chars: 63206,
};

const text = () => z.string().nullable();

export const SocialPostMedia = z.object({
  position: z.number().int().describe('1 = first'),
  storage_path: z.string().describe('In the social-media bucket, under the organization’s folder'),
  mime_type: z.string(),
  bytes: z.number().int(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  source_url: text().describe('The URL it was downloaded from'),
});

export const SocialPost = z
  .object({
    id: z.guid(),
    organization_id: z.guid(),
    platform: z.enum(SOCIAL_PLATFORMS).describe('instagram where meta_payload says it came from Instagram'),
    account_id: z.guid().nullable().describe('The connected Page or Instagram account'),
    status: z.enum(POST_STATUSES),
    message: z.string().max(MEDIA_CONSTRAINTS.max_message_chars).nullable(),
    link: text(),
    media: z.array(SocialPostMedia).max(MEDIA_CONSTRAINTS.max_items_per_post),
    scheduled_at: text().describe('When the publisher posts it (ISO 8601); null for drafts'),
    published_at: text(),
    provider_post_id: text(),
    permalink: text(),
    error: z.record(z.string(), z.unknown()).nullable().describe('The provider’s error for failed posts'),
    meta_payload: z.record(z.string(), z.unknown()).nullable(),
    created_by: text().describe('agent:<key id> or user:<user id>'),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .describe('A post on the organization’s content calendar');

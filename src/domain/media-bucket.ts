/**
 * The one bucket of /storage/v1: the social calendar's media, one folder per organization
 * (`<organization id>/…`). Its keys in the ObjectStore are `social-media/<path>`.
 */
export const SOCIAL_MEDIA_BUCKET = 'social-media';

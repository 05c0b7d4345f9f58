import type { SocialDeps } from '../domain/social-posts.ts';
import type { Services } from '../services.ts';

// TEMPORARY until the storage bucket lands (same session): media downloads refuse.
export const socialDeps = (s: Services): SocialDeps => ({
  ...s,
  fetchMedia: async () => {
    throw Object.assign(new Error('media downloads are not available yet'), {
      reason: 'media downloads are not available yet',
    });
  },
  storage: { put: async () => {}, remove: async (keys) => keys },
});

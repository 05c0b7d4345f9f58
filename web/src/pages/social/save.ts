import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { ApiError } from '../../lib/api';
import { useClaims } from '../../lib/session';
import type { Intent, PostInput } from './PostForm';
import { type Account, createPost, type Post, type PostWrite, STATUS_LABEL, updatePost } from './post';
import { isoToLocalInput, localInputToIso } from './time';
import { stageFiles, unstage } from './uploads';

// Saving a post from the form: files are staged in the bucket first (uploads.ts), then the post is
// written through social-posts; the service's answer (a refusal included) is what the person sees.

export const toForm = (p?: Post, accountId = ''): PostInput => ({
  account_id: p?.account_id ?? accountId,
  message: p?.message ?? '',
  link: p?.link ?? '',
  media_urls: '',
  files: null,
  publish_at: isoToLocalInput(p?.scheduled_at),
});

const lines = (s: string) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

function when(v: PostInput, intent: Intent, before?: Post): string | undefined {
  if (intent !== 'schedule') return undefined;
  const at = localInputToIso(v.publish_at);
  if (!at) throw new ApiError('Choose when to publish it (Publish at) to schedule the post');
  // Re-sending an unchanged time would only restate it (and refuse a time that has just passed).
  return before?.scheduled_at && Date.parse(before.scheduled_at) === Date.parse(at) ? undefined : at;
}

export function useSavePost(accounts: Account[], before?: Post) {
  const claims = useClaims();
  const navigate = useNavigate();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async ({ values, intent }: { values: PostInput; intent: Intent }) => {
      const scheduled_at = when(values, intent, before);
      const files = [...(values.files ?? [])];
      const staged = await stageFiles(claims.organizationId ?? '', files);
      try {
        const media = [...staged.urls, ...lines(values.media_urls)];
        const body: PostWrite = {
          message: values.message.trim() || (before ? null : undefined),
          link: values.link.trim() || (before ? null : undefined),
          ...(media.length ? { media_urls: media } : {}),
          ...(scheduled_at ? { scheduled_at } : {}),
        };
        if (!before) {
          const account = accounts.find((a) => a.id === values.account_id);
          if (!account) throw new ApiError('Choose the account the post goes out on');
          return await createPost({ ...body, platform: account.provider, account_id: account.id });
        }
        return await updatePost(before.id, body);
      } finally {
        await unstage(staged);
      }
    },
    onSuccess: async (post) => {
      await queries.invalidateQueries({ queryKey: ['social'] });
      navigate(`/app/social/${post.id}`);
    },
  });
}

/**
 * Moving a scheduled post on the calendar (dragged to another day, or Move's day and time): the
 * same write as editing its Publish at, so the service's rules decide (only a scheduled post has a
 * time to change; a time must be ahead). The two a person trips most are said before asking.
 */
export function useMovePost() {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async ({ post, at }: { post: Post; at: string }) => {
      if (post.status !== 'scheduled')
        throw new ApiError(
          `A ${STATUS_LABEL[post.status].toLowerCase()} post keeps its time: only scheduled posts can move.`,
        );
      if (Date.parse(at) <= Date.now())
        throw new ApiError('That time has already passed: choose a later day or time to move the post to.');
      return await updatePost(post.id, { scheduled_at: at });
    },
    onSettled: () => queries.invalidateQueries({ queryKey: ['social'] }),
  });
}

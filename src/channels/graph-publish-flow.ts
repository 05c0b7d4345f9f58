// One post's way onto Facebook or Instagram, step by step (graph-publish.ts makes the calls).
// Takes the post as it is now, the account, and the progress an earlier attempt saved; gives out
// Meta's post id and permalink, or a classified failure. Everything Meta creates on the way
// (unpublished photos, Instagram containers) is saved through `save` before the next step, and
// `started_at` is saved right before the first call that makes the post visible, so an attempt
// after a crash or a lost answer looks first (container status, the account's posts back to that
// time: graph-find-post.ts) instead of posting again. docs/social.md, "Publishing once", says what
// this guarantees and what it cannot.
import type { GraphAccount } from './graph-client.ts';
import { type GraphFailure, refusedHere } from './graph-errors.ts';
import { findOwnPost, LOOKBACK_EXHAUSTED } from './graph-find-post.ts';
import type { GraphPublisher, PublishResult } from './graph-publish.ts';

export type PublishProgress = {
  /**
   * Committed right before the first call that makes the post visible, and kept by later attempts:
   * from then on, look before posting, back to this time.
   */
  started_at?: string;
  /** Facebook: photos uploaded unpublished for a multi-photo post. */
  photo_ids?: string[];
  /** Instagram: carousel items' containers. */
  children?: string[];
  /** Instagram: the container media_publish takes. */
  container_id?: string;
};

export type MediaItem = { kind: 'image' | 'video'; url: string };
export type PostToPublish = {
  platform: 'facebook' | 'instagram';
  message: string | null;
  link: string | null;
  media: MediaItem[];
};

export type FlowDeps = {
  graph: GraphPublisher;
  /** Persists progress (committed) before the flow goes on. */
  save(progress: PublishProgress): Promise<void>;
  sleep(ms: number): Promise<void>;
  /** How often and how long one attempt waits for an Instagram container to be FINISHED. */
  containerPolls: number;
  containerPollMs: number;
  now(): Date;
};

/** `recovered`: an earlier attempt had published it; this one found it instead of posting. */
export type FlowResult =
  | { ok: true; id: string | null; permalink: string | null; recovered: boolean }
  | GraphFailure;

export async function publishPost(
  deps: FlowDeps,
  account: GraphAccount,
  post: PostToPublish,
  progress: PublishProgress,
): Promise<FlowResult> {
  const state = { ...progress };
  const save = async (patch: PublishProgress) => {
    Object.assign(state, patch);
    await deps.save(state);
  };
  const made =
    post.platform === 'facebook'
      ? await facebook(deps, account, post, state, save)
      : await instagram(deps, account, post, state, save);
  if (!made.ok || 'recovered' in made) return made;
  const link = await deps.graph.permalink(post.platform, account, made.id);
  // The post is out: a permalink that cannot be read now is no reason to report a failure.
  return { ok: true, id: made.id, permalink: link.ok ? link.value : null, recovered: false };
}

type Save = (patch: PublishProgress) => Promise<void>;
type Step = PublishResult | Extract<FlowResult, { ok: true }> | GraphFailure;

async function facebook(
  deps: FlowDeps,
  page: GraphAccount,
  post: PostToPublish,
  state: PublishProgress,
  save: Save,
): Promise<Step> {
  const message = post.message ?? undefined;
  const videos = post.media.filter((m) => m.kind === 'video');
  if (videos.length > 0 && post.media.length > 1)
    return refusedHere('unsupported_media', 'A Facebook post carries one video alone, or photos');
  const photos = post.media.length > 1 ? await unpublishedPhotos(deps, page, post, state, save) : null;
  if (photos && !photos.ok) return photos;
  // Only the first attempt's time is saved: any attempt since may have posted, so the look reaches
  // back to the first.
  if (state.started_at) {
    const found = await lookFor(deps, page, post, state.started_at);
    if (found) return found;
  } else await save({ started_at: deps.now().toISOString() });
  const [only] = post.media;
  if (photos) return deps.graph.facebookFeed(page, { message, photoIds: photos.ids });
  if (only?.kind === 'video') return deps.graph.facebookVideo(page, { url: only.url, description: message });
  if (only) return deps.graph.facebookPhoto(page, { url: only.url, caption: message, published: true });
  return deps.graph.facebookFeed(page, { message, link: post.link ?? undefined });
}

/** Uploads each photo unpublished once (ids saved), for one feed post that attaches them all. */
async function unpublishedPhotos(
  deps: FlowDeps,
  page: GraphAccount,
  post: PostToPublish,
  state: PublishProgress,
  save: Save,
): Promise<{ ok: true; ids: string[] } | GraphFailure> {
  const ids = [...(state.photo_ids ?? [])];
  for (const item of post.media.slice(ids.length)) {
    const r = await deps.graph.facebookPhoto(page, { url: item.url, published: false });
    if (!r.ok) return r;
    ids.push(r.id);
    await save({ photo_ids: ids });
  }
  return { ok: true, ids };
}

async function instagram(
  deps: FlowDeps,
  ig: GraphAccount,
  post: PostToPublish,
  state: PublishProgress,
  save: Save,
): Promise<Step> {
  if (post.media.length === 0) return refusedHere('no_media', 'An Instagram post needs an image or a video');
  const caption = post.message ?? undefined;
  if (!state.container_id) {
    const container = await createContainer(deps, ig, post.media, caption, state, save);
    if (!container.ok) return container;
    await save({ container_id: container.id });
  }
  const id = state.container_id as string;
  const ready = await whenReady(deps, ig, id);
  if (!ready.ok) return ready;
  if (ready.value === 'PUBLISHED') {
    // Only an earlier attempt of ours published this container: find the media it became. It is
    // out either way, so a look that cannot find it records the post without its id.
    const found = await lookFor(deps, ig, post, state.started_at ?? new Date(0).toISOString());
    const gaveUp = found && !found.ok && found.error.type === LOOKBACK_EXHAUSTED;
    return found && !gaveUp ? found : { ok: true, id: null, permalink: null, recovered: true };
  }
  if (!state.started_at) await save({ started_at: deps.now().toISOString() });
  return deps.graph.instagramPublish(ig, id);
}

async function createContainer(
  deps: FlowDeps,
  ig: GraphAccount,
  media: MediaItem[],
  caption: string | undefined,
  state: PublishProgress,
  save: Save,
): Promise<PublishResult> {
  const [only] = media;
  if (media.length === 1 && only) return deps.graph.instagramContainer(ig, only, { caption });
  const children = [...(state.children ?? [])];
  for (const item of media.slice(children.length)) {
    const r = await deps.graph.instagramContainer(ig, item, { carouselItem: true });
    if (!r.ok) return r;
    children.push(r.id);
    await save({ children });
  }
  return deps.graph.instagramContainer(ig, { kind: 'carousel', children }, { caption });
}

/** Polls a container until it can be published (or was); ERROR and EXPIRED are Meta's refusal. */
async function whenReady(
  deps: FlowDeps,
  ig: GraphAccount,
  id: string,
): Promise<{ ok: true; value: 'FINISHED' | 'PUBLISHED' } | GraphFailure> {
  for (let poll = 1; ; poll++) {
    const s = await deps.graph.containerStatus(ig, id);
    if (!s.ok) return s;
    const code = s.value.status_code;
    if (code === 'FINISHED' || code === 'PUBLISHED') return { ok: true, value: code };
    if (code === 'ERROR' || code === 'EXPIRED')
      return {
        ok: false,
        transient: false,
        status: 200,
        error: {
          code: null,
          subcode: s.value.status ? Number.parseInt(s.value.status, 10) || null : null,
          type: `container_${code.toLowerCase()}`,
          message: `Instagram could not prepare the media (container ${code}${s.value.status ? `: ${s.value.status}` : ''})`,
          fbtrace_id: null,
        },
      };
    // IN_PROGRESS: video takes minutes. The container is saved, so a later attempt polls it again.
    if (poll >= deps.containerPolls)
      return {
        ok: false,
        transient: true,
        status: 200,
        error: {
          code: null,
          subcode: null,
          type: 'container_in_progress',
          message: 'Instagram is still processing the media',
          fbtrace_id: null,
        },
      };
    await deps.sleep(deps.containerPollMs);
  }
}

/**
 * The post on the account if an earlier attempt made it: same text, created since the first
 * attempt began. A failed look is returned as the failure (transient ones retry): never post blind.
 */
async function lookFor(
  deps: FlowDeps,
  account: GraphAccount,
  post: PostToPublish,
  startedAt: string,
): Promise<Extract<FlowResult, { ok: true }> | GraphFailure | null> {
  const found = await findOwnPost(deps.graph, post.platform, account, post.message, startedAt);
  if (!found.ok) return found;
  const mine = found.value;
  return mine ? { ok: true, id: mine.id, permalink: mine.permalink, recovered: true } : null;
}

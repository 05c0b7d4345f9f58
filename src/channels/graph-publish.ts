// Publishing through the Graph API, one call per function: Facebook Pages (feed, photos, videos)
// on META_GRAPH_URL, Instagram content publishing (media containers, media_publish) on
// META_INSTAGRAM_GRAPH_URL, and the reads the publisher and the metrics job need (permalink,
// container status, the account's posts a page at a time, insights). Media go by public URL: Meta downloads them, so the
// caller passes URLs Meta can reach (signed URLs of our storage). Like graph-client.ts it never
// throws for anything Meta or the network does and never logs. Formats and sources:
// docs/graph-api.md, "Publishing".
import { type Answer, callGraph, type GraphAccount, type GraphClientConfig } from './graph-client.ts';
import type { GraphFailure } from './graph-errors.ts';

export type Published = { ok: true; id: string; body: Record<string, unknown> };
export type PublishResult = Published | GraphFailure;
export type ReadResult<T> = { ok: true; value: T } | GraphFailure;

/** A container's state as Instagram reports it (`status_code`), with `status` (an error subcode) on ERROR. */
export type ContainerStatus = {
  status_code: 'EXPIRED' | 'ERROR' | 'FINISHED' | 'IN_PROGRESS' | 'PUBLISHED';
  status: string | null;
};
/** A post or media item of the account, as its listing shows it. */
export type RecentPost = { id: string; text: string | null; created_at: string; permalink: string | null };
/**
 * One page of an account's listing, newest first. `next` holds the parameters of the following
 * page (taken from Graph's `paging.next`), null on the last page.
 */
export type PostsPage = { posts: RecentPost[]; next: Record<string, string> | null };
/** One insights metric: a number, or an object of numbers (reactions by type). */
export type Insight = { name: string; value: number | Record<string, number> };

/** What an Instagram container is made of (Content Publishing: image_url, video_url, media_type). */
export type InstagramItem =
  | { kind: 'image'; url: string }
  | { kind: 'video'; url: string }
  | { kind: 'carousel'; children: string[] };

export type GraphPublisher = {
  /** `POST /{page-id}/feed`: text, a link, or several photos uploaded unpublished (`attached_media`). */
  facebookFeed(
    page: GraphAccount,
    post: { message?: string; link?: string; photoIds?: string[] },
  ): Promise<PublishResult>;
  /** `POST /{page-id}/photos` by URL; `published: false` uploads it for a multi-photo post. */
  facebookPhoto(
    page: GraphAccount,
    photo: { url: string; caption?: string; published: boolean },
  ): Promise<PublishResult>;
  /** `POST /{page-id}/videos` with `file_url`: Meta fetches and processes it. */
  facebookVideo(page: GraphAccount, video: { url: string; description?: string }): Promise<PublishResult>;
  /** `POST /{ig-user-id}/media`: a container for one item, a carousel item, or the carousel. */
  instagramContainer(
    ig: GraphAccount,
    item: InstagramItem,
    options: { caption?: string; carouselItem?: boolean },
  ): Promise<PublishResult>;
  /** `GET /{container-id}?fields=status_code,status`. */
  containerStatus(ig: GraphAccount, containerId: string): Promise<ReadResult<ContainerStatus>>;
  /** `POST /{ig-user-id}/media_publish` with `creation_id`. */
  instagramPublish(ig: GraphAccount, containerId: string): Promise<PublishResult>;
  /** `GET /{id}?fields=permalink_url` (Facebook) or `?fields=permalink` (Instagram). */
  permalink(
    platform: 'facebook' | 'instagram',
    account: GraphAccount,
    id: string,
  ): Promise<ReadResult<string | null>>;
  /**
   * One page of the account's posts, newest first: `/{page-id}/published_posts` or
   * `/{ig-user-id}/media`, the first page of those created since `since`, or the page `next` names.
   */
  accountPosts(
    platform: 'facebook' | 'instagram',
    account: GraphAccount,
    page: { since: Date } | { next: Record<string, string> },
  ): Promise<ReadResult<PostsPage>>;
  /**
   * `GET /{object-id}/insights?metric=…` (lifetime values); a Facebook video's numbers are on its
   * own edge, `/{video-id}/video_insights`, in the same format.
   */
  insights(
    platform: 'facebook' | 'instagram',
    account: GraphAccount,
    id: string,
    metrics: readonly string[],
    edge?: 'insights' | 'video_insights',
  ): Promise<ReadResult<Insight[]>>;
  /**
   * Facebook's counts that are fields, not insights: `shares{count}` and the comments summary. A
   * Video node has no `shares` field (asking for it is an error), so a video gets comments only.
   */
  facebookCounts(
    page: GraphAccount,
    postId: string,
    kind?: 'post' | 'video',
  ): Promise<ReadResult<Record<string, number>>>;
};

export function createGraphPublisher(config: GraphClientConfig): GraphPublisher {
  const root = (platform: 'facebook' | 'instagram') =>
    `${(platform === 'facebook' ? config.url : config.instagramUrl).replace(/\/+$/, '')}/${config.version}`;
  const post = (platform: 'facebook' | 'instagram', a: GraphAccount, edge: string, body: object) =>
    callGraph(
      'POST',
      `${root(platform)}/${encodeURIComponent(a.externalId)}/${edge}`,
      a.accessToken,
      body,
      config,
    );
  const get = (platform: 'facebook' | 'instagram', a: GraphAccount, path: string, query: object) =>
    callGraph(
      'GET',
      `${root(platform)}/${path}?${new URLSearchParams(query as Record<string, string>)}`,
      a.accessToken,
      null,
      config,
    );

  return {
    async facebookFeed(page, p) {
      const body: Record<string, unknown> = {};
      if (p.message) body.message = p.message;
      if (p.link) body.link = p.link;
      if (p.photoIds?.length) body.attached_media = p.photoIds.map((id) => ({ media_fbid: id }));
      return created(await post('facebook', page, 'feed', body));
    },
    async facebookPhoto(page, p) {
      const answer = await post('facebook', page, 'photos', {
        url: p.url,
        published: p.published,
        ...(p.caption ? { message: p.caption } : {}),
      });
      // A published photo's answer is {id: photo id, post_id: page post id}: the post is what people see.
      if (answer.ok && p.published) {
        const b = answer.body as { post_id?: unknown };
        if (typeof b?.post_id === 'string') return created({ ...answer, body: { ...b, id: b.post_id } });
      }
      return created(answer);
    },
    async facebookVideo(page, v) {
      return created(
        await post('facebook', page, 'videos', {
          file_url: v.url,
          ...(v.description ? { description: v.description } : {}),
        }),
      );
    },
    async instagramContainer(ig, item, o) {
      const body: Record<string, unknown> =
        item.kind === 'image'
          ? { image_url: item.url }
          : item.kind === 'video'
            ? // A lone video is a reel (media_type VIDEO is gone); inside a carousel it stays VIDEO.
              { video_url: item.url, media_type: o.carouselItem ? 'VIDEO' : 'REELS' }
            : { media_type: 'CAROUSEL', children: item.children.join(',') };
      if (o.carouselItem) body.is_carousel_item = true;
      else if (o.caption) body.caption = o.caption;
      return created(await post('instagram', ig, 'media', body));
    },
    async containerStatus(ig, id) {
      return read(
        await get('instagram', ig, encodeURIComponent(id), { fields: 'status_code,status' }),
        (b) => {
          const code = b.status_code;
          if (typeof code !== 'string') return undefined;
          return {
            status_code: code as ContainerStatus['status_code'],
            status: typeof b.status === 'string' ? b.status : null,
          };
        },
      );
    },
    async instagramPublish(ig, containerId) {
      return created(await post('instagram', ig, 'media_publish', { creation_id: containerId }));
    },
    async permalink(platform, a, id) {
      const field = platform === 'facebook' ? 'permalink_url' : 'permalink';
      return read(await get(platform, a, encodeURIComponent(id), { fields: field }), (b) =>
        typeof b[field] === 'string' ? (b[field] as string) : null,
      );
    },
    async accountPosts(platform, a, page) {
      const fb = platform === 'facebook';
      const query =
        'next' in page
          ? page.next
          : {
              fields: fb ? 'id,message,created_time,permalink_url' : 'id,caption,timestamp,permalink',
              // Graph's default page; `since` (unix seconds) lets Graph leave out older posts.
              limit: '25',
              since: String(Math.floor(page.since.getTime() / 1000)),
            };
      const answer = await get(
        platform,
        a,
        `${encodeURIComponent(a.externalId)}/${fb ? 'published_posts' : 'media'}`,
        query,
      );
      return read(answer, (b) => {
        if (!Array.isArray(b.data)) return undefined;
        const next = nextQuery(b.paging);
        if (next === undefined) return undefined;
        return {
          posts: (b.data as Record<string, unknown>[]).map((p) => ({
            id: String(p.id),
            text: ((fb ? p.message : p.caption) as string | undefined) ?? null,
            created_at: String(fb ? p.created_time : p.timestamp),
            permalink: ((fb ? p.permalink_url : p.permalink) as string | undefined) ?? null,
          })),
          next,
        };
      });
    },
    async insights(platform, a, id, metrics, edge = 'insights') {
      const answer = await get(platform, a, `${encodeURIComponent(id)}/${edge}`, {
        metric: metrics.join(','),
        period: 'lifetime',
      });
      return read(answer, (b) =>
        Array.isArray(b.data)
          ? (b.data as { name: string; values?: { value: unknown }[] }[]).flatMap((m) => {
              const value = m.values?.[0]?.value;
              return typeof value === 'number' || (value && typeof value === 'object')
                ? [{ name: m.name, value: value as Insight['value'] }]
                : [];
            })
          : undefined,
      );
    },
    async facebookCounts(page, postId, kind = 'post') {
      const answer = await get('facebook', page, encodeURIComponent(postId), {
        fields:
          kind === 'video' ? 'comments.limit(0).summary(true)' : 'shares,comments.limit(0).summary(true)',
      });
      return read(answer, (b): Record<string, number> => {
        const comments =
          (b.comments as { summary?: { total_count?: number } } | undefined)?.summary?.total_count ?? 0;
        if (kind === 'video') return { comments };
        return { shares: (b.shares as { count?: number } | undefined)?.count ?? 0, comments };
      });
    },
  };
}

/** A creation's answer: `{id}` (or the photo's post id); a 2xx without one is not a success. */
function created(answer: Answer): PublishResult {
  if (!answer.ok) return answer;
  const b = (answer.body ?? {}) as Record<string, unknown>;
  if (typeof b.id === 'string' && b.id) return { ok: true, id: b.id, body: b };
  // Meta may have created it: a retry could post twice, so this is permanent, as for messages.
  return invalidResponse(answer.status, 'Graph answered success without an id');
}

/**
 * The parameters of Graph's `paging.next` link (cursor or time paging alike), without the access
 * token the link carries: the next call goes to our configured host with the token in its header,
 * so a token never lands in a URL (or a log). No `next` is the end of the list (null); a `next`
 * that is not a URL is an answer we cannot follow (undefined).
 */
function nextQuery(paging: unknown): Record<string, string> | null | undefined {
  const next = (paging as { next?: unknown } | undefined)?.next;
  if (next === undefined || next === null) return null;
  if (typeof next !== 'string' || !URL.canParse(next)) return undefined;
  const query = Object.fromEntries(new URL(next).searchParams);
  delete query.access_token;
  return query;
}

function read<T>(answer: Answer, pick: (b: Record<string, unknown>) => T | undefined): ReadResult<T> {
  if (!answer.ok) return answer;
  const value = pick((answer.body ?? {}) as Record<string, unknown>);
  if (value === undefined)
    return invalidResponse(answer.status, 'Graph answered without the fields asked for');
  return { ok: true, value };
}

const invalidResponse = (status: number, message: string): GraphFailure => ({
  ok: false,
  transient: false,
  status,
  error: { code: null, subcode: null, type: 'invalid_response', message, fbtrace_id: null },
});

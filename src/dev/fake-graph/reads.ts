// The fake's reads, the GETs on what publishing.ts made: an object's fields (permalink, container
// status, the counts Meta keeps as fields), an account's posts (paged by listing.ts), and Insights:
// GET /{id}/insights for posts and Instagram media, GET /{video-id}/video_insights for Page videos
// (which have no /insights), with Meta's current metric names (deprecated ones are refused as
// Graph refuses them). Figures are fixed defaults unless a test sets them per object.
// Development and tests only.
import { type Fault, graphError, unknownObject } from './faults.ts';
import { type LinkTo, listPage } from './listing.ts';
import type { FakeObject } from './objects.ts';

type Json = Record<string, unknown>;
const ok = (body: unknown): Fault => ({ status: 200, body });

/** Metric names Graph answers today (2025 renames: post_impressions → post_media_view, impressions → views). */
export const FACEBOOK_POST_METRICS = [
  'post_media_view',
  'post_total_media_view_unique',
  'post_reactions_by_type_total',
  'post_clicks',
  'post_clicks_by_type',
  'post_video_views',
];
/**
 * Video Insights names (Meta's video_insights reference). The impressions family and
 * total_video_views_unique are left out: the v25.0 changelog removes them when v26.0 ships.
 */
export const FACEBOOK_VIDEO_METRICS = [
  'total_video_views',
  'total_video_views_autoplayed',
  'total_video_views_clicked_to_play',
  'total_video_complete_views',
  'total_video_10s_views',
  'total_video_avg_time_watched',
  'total_video_view_total_time',
  'total_video_reactions_by_type_total',
];
export const INSTAGRAM_MEDIA_METRICS = [
  'views',
  'reach',
  'likes',
  'comments',
  'shares',
  'saved',
  'total_interactions',
  'ig_reels_avg_watch_time',
];

export function createReads(objects: ReadonlyMap<string, FakeObject>) {
  const overrides = new Map<string, Json>();

  /** An object's figures: what a test set, else plausible defaults for its kind. */
  function valuesOf(o: FakeObject): Json {
    return (
      overrides.get(o.id) ??
      (o.kind === 'media'
        ? { views: 120, reach: 90, likes: 14, comments: 3, shares: 2, saved: 5, total_interactions: 24 }
        : o.kind === 'video'
          ? {
              total_video_views: 310,
              total_video_complete_views: 95,
              total_video_avg_time_watched: 8200,
              total_video_view_total_time: 2_542_000,
              total_video_reactions_by_type_total: { like: 21, love: 6 },
              comments: 4,
            }
          : {
              post_media_view: 240,
              post_total_media_view_unique: 180,
              post_reactions_by_type_total: { like: 11, love: 4 },
              post_clicks: 17,
              shares: 2,
              comments: 6,
            })
    );
  }

  /**
   * GET /{id}/insights or /{video-id}/video_insights ?metric=a,b: Graph's `data` list, one entry per
   * metric, lifetime period. A Video node has only the second edge, everything else only the first.
   */
  function answer(o: FakeObject, edge: 'insights' | 'video_insights', metric: string): Fault {
    if ((edge === 'video_insights') !== (o.kind === 'video'))
      return graphError(
        400,
        100,
        `(#100) Tried accessing nonexisting field (${edge}) on node type (${o.kind === 'video' ? 'Video' : o.kind === 'media' ? 'IGMedia' : 'Post'})`,
        'OAuthException',
      );
    const names = metric.split(',').filter(Boolean);
    if (names.length === 0)
      return graphError(400, 100, '(#100) The parameter metric is required', 'OAuthException');
    const valid =
      o.kind === 'media'
        ? INSTAGRAM_MEDIA_METRICS
        : o.kind === 'video'
          ? FACEBOOK_VIDEO_METRICS
          : FACEBOOK_POST_METRICS;
    const wrong = names.find((n) => !valid.includes(n));
    if (wrong)
      return graphError(
        400,
        100,
        o.kind === 'media'
          ? `(#100) metric[${names.indexOf(wrong)}] must be one of the following values: ${valid.join(', ')}`
          : '(#100) The value must be a valid insights metric',
        'OAuthException',
      );
    const values = valuesOf(o);
    return ok({
      data: names.map((name) => ({
        name,
        period: 'lifetime',
        values: [{ value: values[name] ?? 0 }],
        title: name,
        description: name,
        id: `${o.id}/${edge}/${name}/lifetime`,
      })),
    });
  }

  /**
   * The counts Meta keeps as fields (`GET /{id}?fields=shares,comments.summary(true)`). A Video
   * node has no shares field: asking for it refuses the whole read, as Graph does.
   */
  function countFields(o: FakeObject, fields: string[]): { fields: Json } | { fault: Fault } {
    if (o.kind === 'video' && fields.includes('shares'))
      return {
        fault: graphError(
          400,
          100,
          '(#100) Tried accessing nonexisting field (shares) on node type (Video)',
          'OAuthException',
        ),
      };
    const values = valuesOf(o);
    const out: Json = {};
    if (fields.includes('shares')) out.shares = { count: Number(values.shares ?? 0) };
    if (fields.includes('comments'))
      out.comments = { data: [], summary: { order: 'ranked', total_count: Number(values.comments ?? 0) } };
    return { fields: out };
  }

  /**
   * GET /{id}?fields=…, /{id}/insights, /{video-id}/video_insights, and the paged listings
   * /{account}/published_posts, /{account}/media (listing.ts; `link` makes their paging links).
   */
  function read(id: string, edge: string | null, query: Record<string, string>, link: LinkTo): Fault {
    const o = objects.get(id);
    if (edge === 'published_posts' || (edge === 'media' && !o))
      return listPage(objects.values(), id, edge, query, link);
    if (!o) return unknownObject(id);
    if (edge === 'insights' || edge === 'video_insights') return answer(o, edge, query.metric ?? '');
    if (edge) return graphError(400, 2500, `Unknown path components: /${edge}`, 'OAuthException');
    const fields = (query.fields ?? '').split(',').map((f) => f.replace(/[.{(].*$/, ''));
    const counts = countFields(o, fields);
    if ('fault' in counts) return counts.fault;
    const out: Json = { id: o.id, ...counts.fields };
    for (const field of fields) {
      if (field === 'permalink_url' && o.kind !== 'media') out.permalink_url = o.permalink;
      if (field === 'permalink' && o.kind === 'media') out.permalink = o.permalink;
      if (field === 'status_code' && o.container) {
        const c = o.container;
        if (c.published) out.status_code = 'PUBLISHED';
        else if (c.polls > 0) {
          c.polls--;
          out.status_code = 'IN_PROGRESS';
        } else out.status_code = c.end;
      }
      if (field === 'status' && out.status_code === 'ERROR')
        out.status = '2207026: The media could not be fetched from the URI';
    }
    return ok(out);
  }

  return {
    read,
    setInsights: (id: string, values: Json) => void overrides.set(id, values),
    reset: () => overrides.clear(),
  };
}

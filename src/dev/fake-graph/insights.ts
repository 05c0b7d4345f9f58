// The fake's Insights: what GET /{id}/insights answers for the posts and media publishing.ts made,
// with Meta's current metric names (deprecated ones are refused as Graph refuses them), and the
// counts Meta keeps as fields (shares, comments). Figures are fixed defaults unless a test sets
// them per object. Development and tests only.
import { type Fault, graphError } from './faults.ts';
import type { FakeObject } from './publishing.ts';

type Json = Record<string, unknown>;

/** Metric names Graph answers today (2025 renames: post_impressions → post_media_view, impressions → views). */
export const FACEBOOK_POST_METRICS = [
  'post_media_view',
  'post_total_media_view_unique',
  'post_reactions_by_type_total',
  'post_clicks',
  'post_clicks_by_type',
  'post_video_views',
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

export function createInsights() {
  const overrides = new Map<string, Json>();

  /** An object's figures: what a test set, else plausible defaults for its kind. */
  function valuesOf(o: FakeObject): Json {
    return (
      overrides.get(o.id) ??
      (o.kind === 'media'
        ? { views: 120, reach: 90, likes: 14, comments: 3, shares: 2, saved: 5, total_interactions: 24 }
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

  /** GET /{id}/insights?metric=a,b: Graph's `data` list, one entry per metric, lifetime period. */
  function answer(o: FakeObject, metric: string): Fault {
    const names = metric.split(',').filter(Boolean);
    if (names.length === 0)
      return graphError(400, 100, '(#100) The parameter metric is required', 'OAuthException');
    const valid = o.kind === 'media' ? INSTAGRAM_MEDIA_METRICS : FACEBOOK_POST_METRICS;
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
    return {
      status: 200,
      body: {
        data: names.map((name) => ({
          name,
          period: 'lifetime',
          values: [{ value: values[name] ?? 0 }],
          title: name,
          description: name,
          id: `${o.id}/insights/${name}/lifetime`,
        })),
      },
    };
  }

  return {
    valuesOf,
    answer,
    set: (id: string, values: Json) => void overrides.set(id, values),
    reset: () => overrides.clear(),
  };
}

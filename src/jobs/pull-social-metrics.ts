import type { GraphPublisher, Insight } from '../channels/graph-publish.ts';
import { createGraphPublisher } from '../channels/graph-publish.ts';
import { accountById } from '../domain/connected-accounts.ts';
import type { JobDefinition } from '../platform/queue/queue.ts';
import type { JobDeps } from './deps.ts';

// Analytics for published posts: a job per post that pulls its Insights into
// public.social_post_metrics and enqueues itself again SOCIAL_METRICS_INTERVAL_SECONDS later, for
// as long as the post is younger than 30 days. The publisher starts the chain when it records a
// post published. A second chain for the same post (a run retried after its commit) ends itself:
// a run that finds a pull younger than half the interval does nothing and enqueues nothing.
// Metric names: docs/social.md, "Analytics".

export const METRICS_JOB = 'pull-social-metrics';
export type MetricsJob = { organization_id: string; post_id: string };

/** Facebook's 2025 names (post_impressions became post_media_view); shares and comments are fields. */
export const FACEBOOK_METRICS = [
  'post_media_view',
  'post_total_media_view_unique',
  'post_reactions_by_type_total',
  'post_clicks',
] as const;
/**
 * A Facebook video's lifetime figures from `/{video-id}/video_insights` (its post id is the video's,
 * which post Insights refuse). Not the `total_video_impressions*` family nor
 * `total_video_views_unique`: Meta's v25.0 changelog removes them when v26.0 ships, in every version.
 * Not `total_video_avg_time_watched` either: analytics sum each metric over posts, and a sum of
 * averages means nothing; it is total time (milliseconds) over views.
 */
export const FACEBOOK_VIDEO_METRICS = [
  'total_video_views',
  'total_video_complete_views',
  'total_video_view_total_time',
  'total_video_reactions_by_type_total',
] as const;
/** Instagram media (views replaced impressions and plays in 2025). */
export const INSTAGRAM_METRICS = ['views', 'reach', 'likes', 'comments', 'shares', 'saved'] as const;

const WINDOW_DAYS = 30;

type Target = {
  account_id: string;
  provider_post_id: string;
  /** Published as a video: a Facebook post with video media went out by /videos. */
  video: boolean;
  young: boolean;
  recent_pull: boolean;
};

/** Insights as rows: a breakdown (reactions by type) as its total and one row per key. */
export function metricRows(insights: Insight[], counts: Record<string, number> = {}): [string, number][] {
  const rows: [string, number][] = [];
  for (const { name, value } of insights) {
    if (typeof value === 'number') rows.push([name, value]);
    else {
      const parts = Object.entries(value).filter((e): e is [string, number] => typeof e[1] === 'number');
      rows.push([name, parts.reduce((s, [, n]) => s + n, 0)]);
      for (const [k, n] of parts) rows.push([`${name}.${k}`, n]);
    }
  }
  for (const [k, n] of Object.entries(counts)) rows.push([k, n]);
  return rows;
}

async function pull(
  graph: GraphPublisher,
  platform: 'facebook' | 'instagram',
  account: { externalId: string; accessToken: string },
  id: string,
  video: boolean,
) {
  const fbVideo = platform === 'facebook' && video;
  const insights = fbVideo
    ? await graph.insights(platform, account, id, FACEBOOK_VIDEO_METRICS, 'video_insights')
    : await graph.insights(
        platform,
        account,
        id,
        platform === 'facebook' ? FACEBOOK_METRICS : INSTAGRAM_METRICS,
      );
  if (!insights.ok) return insights;
  if (platform === 'instagram') return { ok: true as const, rows: metricRows(insights.value) };
  const counts = await graph.facebookCounts(account, id, fbVideo ? 'video' : 'post');
  if (!counts.ok) return counts;
  return { ok: true as const, rows: metricRows(insights.value, counts.value) };
}

export function pullSocialMetricsJob(deps: JobDeps): JobDefinition<MetricsJob> {
  const graph = createGraphPublisher(deps.config.graph);
  const interval = deps.config.social.metricsIntervalSeconds;
  return {
    name: METRICS_JOB,
    policy: {
      attempts: 3,
      backoffSeconds: 60,
      maxBackoffSeconds: 600,
      maxAgeSeconds: Math.max(interval, 3600),
      leaseSeconds: Math.ceil((3 * deps.config.graph.timeoutMs) / 1000) + 30,
    },
    async run(job) {
      const { organization_id: org, post_id: postId } = job.data;
      const [t] = await deps.db.query<Target>(
        `select p.account_id, p.provider_post_id,
                exists (select 1 from public.social_post_media m
                         where m.organization_id = p.organization_id and m.post_id = p.id
                           and m.mime_type like 'video/%') as video,
                p.published_at > now() - make_interval(days => $3) as young,
                exists (select 1 from public.social_post_metrics x
                         where x.organization_id = p.organization_id and x.post_id = p.id
                           and x.fetched_at > now() - make_interval(secs => $4)) as recent_pull
           from public.social_posts p
          where p.organization_id = $1 and p.id = $2 and p.status = 'published' and p.provider_post_id is not null`,
        [org, postId, WINDOW_DAYS, interval / 2],
      );
      if (!t?.young || t.recent_pull) return { status: 'done' };
      const account = await accountById(deps, org, t.account_id);
      if (!account || (account.provider !== 'facebook' && account.provider !== 'instagram'))
        return { status: 'done' }; // disconnected: nothing more can be read
      const r = await pull(
        graph,
        account.provider,
        { externalId: account.external_id, accessToken: account.access_token },
        t.provider_post_id,
        t.video,
      );
      if (!r.ok && r.transient) return { status: 'retry', error: r.error };
      await deps.db.transaction(async (tx) => {
        if (r.ok && r.rows.length)
          await tx.query(
            `insert into public.social_post_metrics (organization_id, post_id, metric, value, fetched_at)
             select $1, $2, m.metric, m.value, now()
               from unnest($3::text[], $4::numeric[]) as m (metric, value)`,
            [org, postId, r.rows.map(([k]) => k), r.rows.map(([, v]) => v)],
          );
        // Refused (e.g. too few viewers yet, code 10): try again next time, as long as the post is young.
        await deps.queue.enqueue(tx, METRICS_JOB, job.data, { startAfter: interval });
      });
      if (!r.ok) deps.log.warn({ post_id: postId, error: r.error }, 'social metrics refused');
      return { status: 'done' };
    },
  };
}

// A Facebook video's figures: its provider_post_id is the video's id, which post Insights refuse,
// so the metrics job reads /{video-id}/video_insights and the comment count (a Video node has no
// shares) into social_post_metrics, as it does posts' Insights (publisher-once.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACEBOOK_VIDEO_METRICS } from '../../src/jobs/pull-social-metrics.ts';
import { PAGE, type SocialWorld, schedule, settled, socialWorld } from '../helpers/social.ts';

let w: SocialWorld;
beforeAll(async () => {
  w = await socialWorld();
});
afterAll(() => w?.stop());

const metrics = async (postId: string) =>
  Object.fromEntries(
    (
      await w.svc.services.db.query<{ metric: string; value: string }>(
        `select distinct on (metric) metric, value::text from social_post_metrics
          where post_id = $1 order by metric, fetched_at desc`,
        [postId],
      )
    ).map((r) => [r.metric, Number(r.value)]),
  );

async function pulled(postId: string, until: (m: Record<string, number>) => boolean) {
  const end = Date.now() + 45_000;
  for (;;) {
    const m = await metrics(postId);
    if (until(m)) return m;
    if (Date.now() > end) throw new Error(`metrics not pulled: ${JSON.stringify(m)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('video analytics', () => {
  it('a published Facebook video’s video_insights (views, completions, total watch time, reactions) and comments land in social_post_metrics', async () => {
    const post = await schedule(w, 'facebook', {
      message: 'Behind the scenes',
      media: [{ path: 'clip.mp4', mime: 'video/mp4' }],
    });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const video = s.provider_post_id as string;
    expect(w.graph.published(PAGE).find((o) => o.id === video)?.kind).toBe('video');
    expect(await pulled(post.id, (m) => Object.keys(m).length > 0)).toEqual({
      total_video_views: 310,
      total_video_complete_views: 95,
      total_video_view_total_time: 2_542_000,
      total_video_reactions_by_type_total: 27,
      'total_video_reactions_by_type_total.like': 21,
      'total_video_reactions_by_type_total.love': 6,
      comments: 4,
    });
    const reads = w.graph.requests.filter((r) => r.method === 'GET' && r.path.includes(`/${video}`));
    expect(reads.find((r) => r.path.endsWith('/video_insights'))?.query.metric).toBe(
      FACEBOOK_VIDEO_METRICS.join(','),
    );
    expect(reads.some((r) => r.path.endsWith('/insights'))).toBe(false);

    // The next pull takes the new figures, as for posts.
    w.graph.setInsights(video, { total_video_views: 1200, comments: 9 });
    const later = await pulled(post.id, (m) => m.total_video_views === 1200);
    expect(later).toMatchObject({ total_video_views: 1200, comments: 9 });
  });

  it('a text post on the same Page still reads post Insights', async () => {
    const post = await schedule(w, 'facebook', { message: 'Plain words' });
    const s = await settled(w, post.id);
    const m = await pulled(post.id, (x) => Object.keys(x).length > 0);
    expect(m).toMatchObject({ post_media_view: 240, shares: 2, comments: 6 });
    expect(w.graph.requests.some((r) => r.path.endsWith(`/${s.provider_post_id}/video_insights`))).toBe(
      false,
    );
  });
});

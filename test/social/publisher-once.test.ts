// A post is published once: transient Graph errors are retried until it goes out (once); an answer
// lost after Meta published (what a crash between the Graph call and our commit leaves) is found
// on the Page by the next run instead of posted again; several runs of one post's job, and on
// PostgreSQL two workers with their own pools, publish it once. Then the metrics job pulls its
// Insights into social_post_metrics, readable (not writable) by the organization at /rest/v1.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { enqueuePublish } from '../../src/domain/social-publish.ts';
import { startJobs } from '../../src/jobs/index.ts';
import { openPostgres } from '../../src/platform/db/pg.ts';
import { onPostgres } from '../helpers/db.ts';
import { call } from '../helpers/http.ts';
import {
  IG,
  mediaUrl,
  PAGE,
  requestsTo,
  SOCIAL_ENV,
  type SocialWorld,
  schedule,
  settled,
  socialWorld,
} from '../helpers/social.ts';

let w: SocialWorld;
const stops: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  w = await socialWorld();
});
afterAll(async () => {
  for (const s of stops.reverse()) await s();
  await w?.stop();
});

const onPage = (text: string) => w.graph.published(PAGE).filter((o) => o.text === text);

describe('retries', () => {
  it('two transient errors (500, then 429) are retried and the post goes out once', async () => {
    w.graph.failNext(1, 'server');
    w.graph.failNext(1, 'http429');
    const post = await schedule(w, 'facebook', { message: 'Third time lucky' });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    expect(s.error).toBeNull();
    expect(onPage('Third time lucky')).toHaveLength(1);
    expect(
      requestsTo(w.graph, PAGE, 'feed').filter(
        (r) => (r.body as { message?: string }).message === 'Third time lucky',
      ),
    ).toHaveLength(3);
  });

  it('a transient error on a carousel item keeps the items already made: each is created once', async () => {
    const before = requestsTo(w.graph, IG, 'media').length;
    // The first item goes through; the second meets a 503 and is made on the next run.
    w.graph.failNext(1, 'pass');
    w.graph.failNext(1, 'unavailable');
    const post = await schedule(w, 'instagram', {
      message: 'Patience',
      media: [
        { path: 'a.jpg', mime: 'image/jpeg' },
        { path: 'b.jpg', mime: 'image/jpeg' },
      ],
    });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const calls = requestsTo(w.graph, IG, 'media').slice(before);
    expect(calls.map((r) => r.response?.status)).toEqual([200, 503, 200, 200]);
    expect(calls.map((r) => (r.body as { image_url?: string }).image_url?.split('/').pop())).toEqual([
      'a.jpg?token=t86400',
      'b.jpg?token=t86400',
      'b.jpg?token=t86400',
      undefined,
    ]);
  });
});

describe('a crash between Meta’s success and our commit', () => {
  it('Facebook: the answer is lost after Meta posted; the next run finds the post on the Page and does not post again', async () => {
    w.graph.failNext(1, 'lost');
    const post = await schedule(w, 'facebook', { message: 'Posted once, answer lost' });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const posts = onPage('Posted once, answer lost');
    expect(posts).toHaveLength(1);
    expect(s.provider_post_id).toBe(posts[0]?.id);
    expect(s.permalink).toBe(posts[0]?.permalink);
    // One /feed call in all: the retry looked (published_posts) instead of posting.
    expect(
      requestsTo(w.graph, PAGE, 'feed').filter(
        (r) => (r.body as { message?: string }).message === 'Posted once, answer lost',
      ),
    ).toHaveLength(1);
    expect(
      w.graph.requests.some((r) => r.method === 'GET' && r.path.endsWith(`/${PAGE}/published_posts`)),
    ).toBe(true);
  });

  it('Instagram: media_publish’s answer is lost; the next run sees the container PUBLISHED and records the media without publishing again', async () => {
    const post = await schedule(w, 'instagram', {
      message: 'IG once',
      media: [{ path: 'c.jpg', mime: 'image/jpeg' }],
    });
    // The container creation passes; the publish call's answer is lost.
    w.graph.failNext(1, 'pass');
    w.graph.failNext(1, 'lost');
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const media = w.graph.published(IG).filter((o) => o.text === 'IG once');
    expect(media).toHaveLength(1);
    expect(s.provider_post_id).toBe(media[0]?.id);
    const cid = requestsTo(w.graph, IG, 'media')
      .filter((r) => (r.body as { caption?: string }).caption === 'IG once')
      .map((r) => (r.response?.body as { id: string } | undefined)?.id);
    expect(cid).toHaveLength(1);
    // One media_publish for that container in all: the retry read its status instead.
    expect(
      requestsTo(w.graph, IG, 'media_publish').filter(
        (r) => (r.body as { creation_id?: string }).creation_id === cid[0],
      ),
    ).toHaveLength(1);
  });
});

describe('several runs at once', () => {
  it('four jobs for one post (run side by side) publish it once', async () => {
    const post = await schedule(w, 'facebook', { message: 'Four jobs, one post', inSeconds: 2 });
    await w.svc.services.db.transaction(async (tx) => {
      const [r] = await tx.query<{ at: string }>(
        'select scheduled_at::text as at from social_posts where id = $1',
        [post.id],
      );
      for (let i = 0; i < 3; i++)
        await enqueuePublish(tx, w.svc.services.queue, {
          organization_id: w.org,
          post_id: post.id,
          scheduled_at: r?.at as string,
        });
    });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    await new Promise((r) => setTimeout(r, 2000)); // a second publication would show by now
    expect(onPage('Four jobs, one post')).toHaveLength(1);
  });

  it.skipIf(!onPostgres())(
    'two more workers with their own pools on one PostgreSQL: 10 posts, each published once (PostgreSQL only: PGlite is one process’s database)',
    async () => {
      const config = loadConfig({
        ...SOCIAL_ENV,
        META_GRAPH_URL: w.graph.url,
        META_INSTAGRAM_GRAPH_URL: w.graph.url,
        DATA_DIR: w.svc.dataDir,
      });
      for (let i = 0; i < 2; i++) {
        const db = openPostgres(w.svc.databaseUrl as string, 5);
        const worker = await startJobs(
          {
            config,
            db,
            log: pino({ level: 'silent' }),
            now: () => new Date(),
            secrets: w.svc.services.secrets,
            mediaUrl,
          },
          { work: true },
        );
        stops.push(async () => {
          await worker.stop();
          await db.close();
        });
      }
      const posts = [];
      for (let i = 0; i < 10; i++)
        posts.push(await schedule(w, 'facebook', { message: `Worker race ${i}`, inSeconds: 2 }));
      for (const p of posts) expect((await settled(w, p.id)).status).toBe('published');
      await new Promise((r) => setTimeout(r, 2000));
      for (let i = 0; i < 10; i++) expect(onPage(`Worker race ${i}`)).toHaveLength(1);
    },
  );
});

describe('analytics', () => {
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
  const pulled = async (postId: string) => {
    const end = Date.now() + 45_000;
    for (;;) {
      const m = await metrics(postId);
      if (Object.keys(m).length) return m;
      if (Date.now() > end) throw new Error('no metrics pulled');
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  it('a published Facebook post’s Insights (2025 names), reactions, comments and shares land in social_post_metrics', async () => {
    const post = await schedule(w, 'facebook', { message: 'Count me' });
    const s = await settled(w, post.id);
    expect(await pulled(post.id)).toEqual({
      post_media_view: 240,
      post_total_media_view_unique: 180,
      post_reactions_by_type_total: 15,
      'post_reactions_by_type_total.like': 11,
      'post_reactions_by_type_total.love': 4,
      post_clicks: 17,
      shares: 2,
      comments: 6,
    });
    const insights = w.graph.requests.find((r) => r.path.endsWith(`/${s.provider_post_id}/insights`));
    expect(insights?.query.metric).toBe(
      'post_media_view,post_total_media_view_unique,post_reactions_by_type_total,post_clicks',
    );
  });

  it('an Instagram post’s views, reach, likes, comments, shares and saves; pulled again each interval', async () => {
    const post = await schedule(w, 'instagram', {
      message: 'Count me too',
      media: [{ path: 'd.jpg', mime: 'image/jpeg' }],
    });
    const s = await settled(w, post.id);
    expect(await pulled(post.id)).toEqual({
      views: 120,
      reach: 90,
      likes: 14,
      comments: 3,
      shares: 2,
      saved: 5,
    });
    w.graph.setInsights(s.provider_post_id as string, {
      views: 500,
      reach: 300,
      likes: 40,
      comments: 9,
      shares: 7,
      saved: 8,
    });
    const end = Date.now() + 45_000;
    while ((await metrics(post.id)).views !== 500) {
      if (Date.now() > end) throw new Error('not pulled again');
      await new Promise((r) => setTimeout(r, 200));
    }
    const [n] = await w.svc.services.db.query<{ pulls: number }>(
      `select count(distinct fetched_at)::int as pulls from social_post_metrics where post_id = $1`,
      [post.id],
    );
    expect(n?.pulls).toBeGreaterThanOrEqual(2);
  });

  it('the organization reads its metrics at /rest/v1 and cannot write them', async () => {
    const post = await schedule(w, 'facebook', { message: 'Readable' });
    await settled(w, post.id);
    await pulled(post.id);
    const read = await call(
      w.svc,
      'GET',
      `/rest/v1/social_post_metrics?post_id=eq.${post.id}&metric=eq.post_clicks`,
      {
        token: w.owner.access_token,
      },
    );
    expect(read.status).toBe(200);
    expect(read.json[0]).toMatchObject({ post_id: post.id, metric: 'post_clicks', value: 17 });
    const write = await call(w.svc, 'POST', '/rest/v1/social_post_metrics', {
      token: w.owner.access_token,
      body: { post_id: post.id, metric: 'post_clicks', value: 1e6 },
    });
    expect(write.status).toBeGreaterThanOrEqual(400);
  });
});

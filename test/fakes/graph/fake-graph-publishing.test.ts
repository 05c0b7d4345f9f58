// The fake's publishing side speaks Meta's formats and refuses what Meta refuses: a deprecated
// Insights metric, a lone video that is not a reel, a carousel of other accounts' containers, a
// container published before it is FINISHED or twice, another account's token. And the publishing
// client reads its answers (graph-publish.ts), including Graph's time format and breakdowns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGraphTime } from '../../../src/channels/graph-find-post.ts';
import { createGraphPublisher } from '../../../src/channels/graph-publish.ts';
import { metricRows } from '../../../src/jobs/pull-social-metrics.ts';
import { type FakeGraph, startFakeGraph } from './index.ts';

let graph: FakeGraph;
const page = { externalId: '1045', accessToken: 'EAA-page-token-1045' };
const ig = { externalId: '1784', accessToken: 'IGAA-ig-token-1784' };
const other = { externalId: '1785', accessToken: 'IGAA-ig-token-1785' };
let client: ReturnType<typeof createGraphPublisher>;

beforeAll(async () => {
  graph = await startFakeGraph({
    accounts: {
      [page.externalId]: { token: page.accessToken, channel: 'messenger' },
      [ig.externalId]: { token: ig.accessToken, channel: 'instagram' },
      [other.externalId]: { token: other.accessToken, channel: 'instagram' },
    },
    containerPolls: 1,
  });
  client = createGraphPublisher({
    url: graph.url,
    instagramUrl: graph.url,
    version: 'v26.0',
    timeoutMs: 3000,
  });
});
afterAll(async () => {
  await graph?.close();
});

describe('the fake Graph API publishes as Meta does', () => {
  it('refuses deprecated Insights metrics with code 100, and answers current ones in Graph’s shape', async () => {
    const post = await client.facebookFeed(page, { message: 'Hi' });
    if (!post.ok) throw new Error('post failed');
    const old = await client.insights('facebook', page, post.id, ['post_impressions']);
    expect(old).toMatchObject({ ok: false, transient: false, status: 400, error: { code: 100 } });
    const now = await client.insights('facebook', page, post.id, [
      'post_media_view',
      'post_reactions_by_type_total',
    ]);
    expect(now).toEqual({
      ok: true,
      value: [
        { name: 'post_media_view', value: 240 },
        { name: 'post_reactions_by_type_total', value: { like: 11, love: 4 } },
      ],
    });
    const media = await client.instagramContainer(ig, { kind: 'image', url: 'https://x.test/a.jpg' }, {});
    if (!media.ok) throw new Error('container failed');
    expect(await client.insights('instagram', ig, media.id, ['impressions'])).toMatchObject({ ok: false });
  });

  it('a lone video must be a reel; VIDEO is for carousel items only', async () => {
    const r = await fetch(`${graph.url}/v26.0/${ig.externalId}/media`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ig.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ video_url: 'https://x.test/v.mp4', media_type: 'VIDEO' }),
    });
    expect(r.status).toBe(400);
    expect((await r.json()).error.code).toBe(100);
  });

  it('a container is published only once FINISHED, only once, and only by its account', async () => {
    const c = await client.instagramContainer(
      ig,
      { kind: 'image', url: 'https://x.test/b.jpg' },
      { caption: 'B' },
    );
    if (!c.ok) throw new Error('container failed');
    expect(await client.instagramPublish(ig, c.id)).toMatchObject({
      ok: false,
      error: { code: 9007, subcode: 2207027 },
    });
    expect(await client.containerStatus(ig, c.id)).toEqual({
      ok: true,
      value: { status_code: 'IN_PROGRESS', status: null },
    });
    expect(await client.containerStatus(ig, c.id)).toEqual({
      ok: true,
      value: { status_code: 'FINISHED', status: null },
    });
    // Another account can neither publish it (not its container) nor read it (not its token).
    expect(await client.instagramPublish(other, c.id)).toMatchObject({ ok: false, error: { code: 100 } });
    expect(await client.containerStatus(other, c.id)).toMatchObject({ ok: false, error: { code: 190 } });
    const published = await client.instagramPublish(ig, c.id);
    expect(published.ok).toBe(true);
    expect(await client.instagramPublish(ig, c.id)).toMatchObject({ ok: false, error: { code: 100 } });
    expect(await client.containerStatus(ig, c.id)).toMatchObject({ value: { status_code: 'PUBLISHED' } });
    expect(graph.published(ig.externalId).map((o) => o.text)).toContain('B');
  });

  it('a carousel takes only this account’s item containers', async () => {
    const mine = await client.instagramContainer(
      other,
      { kind: 'image', url: 'https://x.test/c.jpg' },
      { carouselItem: true },
    );
    if (!mine.ok) throw new Error('item failed');
    const r = await client.instagramContainer(
      ig,
      { kind: 'carousel', children: [mine.id, mine.id] },
      { caption: 'C' },
    );
    expect(r).toMatchObject({ ok: false, error: { code: 100 } });
  });

  it('recent posts carry Graph’s times, which the flow reads; breakdowns become a total and a row per key', async () => {
    const recent = await client.accountPosts('facebook', page, { since: new Date(Date.now() - 60_000) });
    if (!recent.ok) throw new Error('read failed');
    const [first] = recent.value.posts;
    expect(first?.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/);
    expect(Math.abs(parseGraphTime(first?.created_at ?? '') - Date.now())).toBeLessThan(60_000);
    expect(
      metricRows(
        [
          { name: 'r', value: { like: 2, wow: 1 } },
          { name: 'views', value: 7 },
        ],
        { shares: 1 },
      ),
    ).toEqual([
      ['r', 3],
      ['r.like', 2],
      ['r.wow', 1],
      ['views', 7],
      ['shares', 1],
    ]);
  });

  it('lists an account’s posts as Graph pages them: newest first, 25 a page, cursors, a next link to the last page', async () => {
    const busy = { externalId: '1046', accessToken: 'EAA-page-token-1046' };
    graph.setAccount(busy.externalId, { token: busy.accessToken, channel: 'messenger' });
    for (let i = 1; i <= 30; i++) graph.postElsewhere(busy.externalId, `Post ${i}`);
    const auth = { authorization: `Bearer ${busy.accessToken}` };
    const url = `${graph.url}/v26.0/${busy.externalId}/published_posts?fields=id,message,created_time`;
    type Listing = {
      data: { message: string }[];
      paging?: { cursors: { before: string; after: string }; next?: string; previous?: string };
    };
    const first = (await (await fetch(url, { headers: auth })).json()) as Listing;
    expect(first.data).toHaveLength(25);
    expect(first.data[0]?.message).toBe('Post 30');
    expect(first.paging?.previous).toBeUndefined();
    // Graph's next link is absolute and carries every parameter, the token included.
    const next = new URL(first.paging?.next as string);
    expect(next.searchParams.get('access_token')).toBe(busy.accessToken);
    expect(next.searchParams.get('limit')).toBe('25');
    expect(next.searchParams.get('fields')).toBe('id,message,created_time');
    expect(next.searchParams.get('after')).toBe(first.paging?.cursors.after);
    const second = (await (await fetch(next)).json()) as Listing;
    expect(second.data.map((p) => p.message)).toEqual(['Post 5', 'Post 4', 'Post 3', 'Post 2', 'Post 1']);
    expect(second.paging?.next).toBeUndefined(); // the end of the list
    expect(second.paging?.previous).toContain('before=');
    // `since` leaves older posts out; a cursor that names no post is refused, never looped on.
    const later = Math.floor(Date.now() / 1000) + 3600;
    expect(await (await fetch(`${url}&since=${later}`, { headers: auth })).json()).toEqual({ data: [] });
    expect((await fetch(`${url}&after=bm9wZQ==`, { headers: auth })).status).toBe(400);

    // The client gives the next page's parameters without the token, which it sends in the header.
    const p1 = await client.accountPosts('facebook', busy, { since: new Date(Date.now() - 60_000) });
    if (!p1.ok) throw new Error('read failed');
    expect(p1.value.posts).toHaveLength(25);
    expect(p1.value.next).toMatchObject({ after: first.paging?.cursors.after });
    expect(p1.value.next).not.toHaveProperty('access_token');
    const p2 = await client.accountPosts('facebook', busy, { next: p1.value.next ?? {} });
    if (!p2.ok) throw new Error('read failed');
    expect(p2.value.posts.map((p) => p.text)).toEqual(['Post 5', 'Post 4', 'Post 3', 'Post 2', 'Post 1']);
    expect(p2.value.next).toBeNull();
  });

  it('a Page video answers /video_insights in Graph’s shape, not /insights; its node has no shares', async () => {
    const video = await client.facebookVideo(page, { url: 'https://x.test/v.mp4', description: 'Clip' });
    if (!video.ok) throw new Error('video failed');
    const raw = await fetch(
      `${graph.url}/v26.0/${video.id}/video_insights?metric=total_video_views,total_video_reactions_by_type_total&period=lifetime`,
      { headers: { authorization: `Bearer ${page.accessToken}` } },
    );
    expect(await raw.json()).toEqual({
      data: [
        {
          name: 'total_video_views',
          period: 'lifetime',
          values: [{ value: 310 }],
          title: 'total_video_views',
          description: 'total_video_views',
          id: `${video.id}/video_insights/total_video_views/lifetime`,
        },
        expect.objectContaining({
          name: 'total_video_reactions_by_type_total',
          values: [{ value: { like: 21, love: 6 } }],
        }),
      ],
    });
    // Post Insights on a video id, a metric Meta removes with v26.0, shares on a Video: code 100.
    const refused = [
      await client.insights('facebook', page, video.id, ['post_media_view']),
      await client.insights('facebook', page, video.id, ['total_video_impressions'], 'video_insights'),
      await client.facebookCounts(page, video.id),
    ];
    for (const r of refused) expect(r).toMatchObject({ ok: false, status: 400, error: { code: 100 } });
    expect(await client.facebookCounts(page, video.id, 'video')).toEqual({
      ok: true,
      value: { comments: 4 },
    });
    const post = await client.facebookFeed(page, { message: 'Not a video' });
    if (!post.ok) throw new Error('post failed');
    expect(
      await client.insights('facebook', page, post.id, ['total_video_views'], 'video_insights'),
    ).toMatchObject({ ok: false, error: { code: 100 } });
  });
});

// The publisher (src/jobs/publish-social-post.ts) against the fake Graph API: each kind of
// Facebook and Instagram post goes out at its time in Meta's format and is recorded published with
// Meta's id and permalink; Meta's refusals (a container in ERROR, a bad token) leave it failed with
// Meta's error; a post cancelled, edited or moved while its job waits is published as it is then,
// or not at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IG,
  PAGE,
  postState,
  requestsTo,
  type SocialWorld,
  schedule,
  settled,
  socialWorld,
} from '../helpers/social.ts';

let w: SocialWorld;
beforeAll(async () => {
  w = await socialWorld();
});
afterAll(async () => {
  await w?.stop();
});

const img = (n: number) => ({ path: `org/${n}.jpg`, mime: 'image/jpeg' });
const video = { path: 'org/clip.mp4', mime: 'video/mp4' };
type Req = { body: unknown; response: { body: unknown } | null } | undefined;
/** A field of a recorded request's body, or of the fake's answer to it. */
const sent = (r: Req, k: string) => (r?.body as Record<string, unknown> | undefined)?.[k];
const answered = (r: Req, k: string) => (r?.response?.body as Record<string, unknown> | undefined)?.[k];
const publishedOn = (account: string, id: string | null) =>
  w.graph.published(account).filter((o) => o.id === id);

describe('Facebook Page posts', () => {
  it('a text post scheduled 3 s ahead is published after its time, once, with Meta’s id and permalink', async () => {
    const post = await schedule(w, 'facebook', { message: 'Doors open at nine', inSeconds: 3 });
    expect((await postState(w, post.id)).status).toBe('scheduled');
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    expect((s.published_at as Date).getTime()).toBeGreaterThanOrEqual((s.scheduled_at as Date).getTime());
    expect(s.provider_post_id).toMatch(new RegExp(`^${PAGE}_\\d+$`));
    expect(s.permalink).toBe(`https://www.facebook.com/${PAGE}/posts/${s.provider_post_id?.split('_')[1]}`);
    expect(publishedOn(PAGE, s.provider_post_id)).toHaveLength(1);
    const [feed] = requestsTo(w.graph, PAGE, 'feed').filter(
      (r) => sent(r, 'message') === 'Doors open at nine',
    );
    expect(feed?.headers.authorization).toMatch(/^Bearer /);
    expect(feed?.path).toBe(`/v26.0/${PAGE}/feed`);
  });

  it('a link post sends message and link to /feed', async () => {
    const post = await schedule(w, 'facebook', {
      message: 'Read the menu',
      link: 'https://example.test/menu',
    });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const [o] = publishedOn(PAGE, s.provider_post_id);
    expect(o?.body).toMatchObject({ message: 'Read the menu', link: 'https://example.test/menu' });
  });

  it('one photo goes to /photos by a signed URL of our storage, and the post is the photo’s page post', async () => {
    const post = await schedule(w, 'facebook', { message: 'New mural', media: [img(1)] });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const photo = requestsTo(w.graph, PAGE, 'photos').at(-1);
    expect(photo?.body).toMatchObject({ published: true, message: 'New mural' });
    expect(String(sent(photo, 'url'))).toMatch(
      /^https:\/\/media\.example\.test\/storage\/v1\/object\/sign\/social-media\/org\/1\.jpg\?token=/,
    );
    expect(s.provider_post_id).toBe(answered(photo, 'post_id'));
  });

  it('several photos are uploaded unpublished and attached to one /feed post', async () => {
    const before = requestsTo(w.graph, PAGE, 'photos').length;
    const post = await schedule(w, 'facebook', { message: 'Three plates', media: [img(1), img(2), img(3)] });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const uploads = requestsTo(w.graph, PAGE, 'photos').slice(before);
    expect(uploads.map((u) => sent(u, 'published'))).toEqual([false, false, false]);
    const ids = uploads.map((u) => answered(u, 'id'));
    const [o] = publishedOn(PAGE, s.provider_post_id);
    expect(o?.body.attached_media).toEqual(ids.map((id) => ({ media_fbid: id })));
  });

  it('a video goes to /videos with file_url and its description', async () => {
    const post = await schedule(w, 'facebook', { message: 'Behind the bar', media: [video] });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const [o] = publishedOn(PAGE, s.provider_post_id);
    expect(o?.kind).toBe('video');
    expect(o?.body).toMatchObject({ description: 'Behind the bar' });
    expect(String(o?.body.file_url)).toContain('org/clip.mp4');
    expect(s.permalink).toBe(`https://www.facebook.com/${PAGE}/videos/${s.provider_post_id}/`);
  });

  it('a refused token leaves the post failed with Meta’s code and message, and nothing published', async () => {
    const count = w.graph.published(PAGE).length;
    w.graph.failNext(1, 'token');
    const post = await schedule(w, 'facebook', { message: 'Will not go out' });
    const s = await settled(w, post.id);
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ code: 190, type: 'OAuthException', transient: false });
    expect(s.error?.message).toMatch(/access token/i);
    expect(s.provider_post_id).toBeNull();
    expect(w.graph.published(PAGE)).toHaveLength(count);
  });
});

describe('an account flagged for reconnect', () => {
  it('a post on it fails with account_needs_reconnect and the reason, and nothing goes to Meta', async () => {
    const db = w.svc.services.db;
    const count = requestsTo(w.graph, PAGE, 'feed').length;
    await db.query(
      `update app.connected_accounts set needs_reconnect_at = now(), needs_reconnect_reason = 'The Page removed our access.'
        where organization_id = $1 and id = $2`,
      [w.org, w.facebook],
    );
    try {
      const post = await schedule(w, 'facebook', { message: 'Held back' });
      const s = await settled(w, post.id);
      expect(s.status).toBe('failed');
      expect(s.error).toMatchObject({
        type: 'account_needs_reconnect',
        message: 'The Page removed our access.',
      });
      expect(requestsTo(w.graph, PAGE, 'feed')).toHaveLength(count);
    } finally {
      await db.query(
        `update app.connected_accounts set needs_reconnect_at = null, needs_reconnect_reason = null
          where organization_id = $1 and id = $2`,
        [w.org, w.facebook],
      );
    }
  });
});

describe('Instagram posts', () => {
  it('one image: a container polled until FINISHED, then media_publish, with the permalink', async () => {
    const post = await schedule(w, 'instagram', { message: 'Sunday brunch', media: [img(4)] });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const container = requestsTo(w.graph, IG, 'media').at(-1);
    expect(container?.body).toMatchObject({ caption: 'Sunday brunch' });
    expect(String(sent(container, 'image_url'))).toContain('org/4.jpg');
    const cid = answered(container, 'id');
    const polls = w.graph.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/${cid}`));
    expect(polls.map((p) => p.response?.body)).toEqual([
      { id: cid, status_code: 'IN_PROGRESS' },
      { id: cid, status_code: 'IN_PROGRESS' },
      { id: cid, status_code: 'FINISHED' },
    ]);
    expect(requestsTo(w.graph, IG, 'media_publish').at(-1)?.body).toEqual({ creation_id: cid });
    expect(publishedOn(IG, s.provider_post_id)).toHaveLength(1);
    expect(s.permalink).toMatch(/^https:\/\/www\.instagram\.com\/p\/[\w-]+\/$/);
  });

  it('a carousel: one item container each (a video as VIDEO), a CAROUSEL container with the children, published once', async () => {
    const before = requestsTo(w.graph, IG, 'media').length;
    const post = await schedule(w, 'instagram', { message: 'Our week', media: [img(5), video, img(6)] });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    const made = requestsTo(w.graph, IG, 'media').slice(before);
    expect(made.map((m) => m.body)).toEqual([
      { image_url: expect.stringContaining('org/5.jpg'), is_carousel_item: true },
      { video_url: expect.stringContaining('org/clip.mp4'), media_type: 'VIDEO', is_carousel_item: true },
      { image_url: expect.stringContaining('org/6.jpg'), is_carousel_item: true },
      {
        media_type: 'CAROUSEL',
        children: made
          .slice(0, 3)
          .map((m) => answered(m, 'id'))
          .join(','),
        caption: 'Our week',
      },
    ]);
    expect(publishedOn(IG, s.provider_post_id)).toHaveLength(1);
  });

  it('a single video is a reel (media_type REELS)', async () => {
    const post = await schedule(w, 'instagram', { message: 'Pour-over', media: [video] });
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    expect(requestsTo(w.graph, IG, 'media').at(-1)?.body).toMatchObject({
      media_type: 'REELS',
      caption: 'Pour-over',
    });
  });

  it('a container that ends in ERROR leaves the post failed with Instagram’s status, and nothing published', async () => {
    const count = w.graph.published(IG).length;
    w.graph.failContainers(1, 'ERROR');
    const post = await schedule(w, 'instagram', { message: 'Broken file', media: [img(7)] });
    const s = await settled(w, post.id);
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ type: 'container_error', subcode: 2207026, transient: false });
    expect(s.error?.message).toContain('could not be fetched');
    expect(w.graph.published(IG)).toHaveLength(count);
  });

  it('a post without media cannot go to Instagram: failed, nothing sent', async () => {
    const post = await schedule(w, 'instagram', { message: 'Text only' });
    const s = await settled(w, post.id);
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ type: 'no_media' });
  });
});

describe('a post changed while its job waits', () => {
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('cancelled (back to draft): never published, and the old job does nothing', async () => {
    const count = w.graph.published(PAGE).length;
    const post = await schedule(w, 'facebook', { message: 'Cancelled brunch', inSeconds: 2 });
    await w.svc.services.db.query(`update public.social_posts set status = 'draft' where id = $1`, [post.id]);
    await wait(5000);
    const s = await postState(w, post.id);
    expect(s.status).toBe('draft');
    expect(s.scheduled_at).toBeNull();
    expect(w.graph.published(PAGE)).toHaveLength(count);
  });

  it('edited: published with the text it has at run time', async () => {
    const post = await schedule(w, 'facebook', { message: 'First words', inSeconds: 2 });
    await w.svc.services.db.query(
      `update public.social_posts set message = 'Second thoughts' where id = $1`,
      [post.id],
    );
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    expect(publishedOn(PAGE, s.provider_post_id)[0]?.text).toBe('Second thoughts');
  });

  it('moved to a later time: the old job does nothing, the new one publishes it once after the new time', async () => {
    const post = await schedule(w, 'facebook', { message: 'Moved on', inSeconds: 1 });
    const moved = await w.svc.services.db.transaction(async (tx) => {
      const [r] = await tx.query<{ scheduled_at: string }>(
        `update public.social_posts set scheduled_at = now() + interval '4 seconds' where id = $1 returning scheduled_at::text`,
        [post.id],
      );
      const { enqueuePublish } = await import('../../src/domain/social-publish.ts');
      await enqueuePublish(tx, w.svc.services.queue, {
        organization_id: w.org,
        post_id: post.id,
        scheduled_at: r?.scheduled_at as string,
      });
      return r?.scheduled_at as string;
    });
    await wait(2500);
    expect((await postState(w, post.id)).status).toBe('scheduled');
    const s = await settled(w, post.id);
    expect(s.status).toBe('published');
    expect((s.published_at as Date).getTime()).toBeGreaterThanOrEqual(new Date(moved).getTime());
    expect(w.graph.published(PAGE).filter((o) => o.text === 'Moved on')).toHaveLength(1);
  });
});

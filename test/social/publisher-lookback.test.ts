// A lost answer never publishes a post twice, however busy the account (issue 26, section 7).
// When Graph's answer to the publishing call is lost, the next run looks for the post on the
// account before posting again; here 30 other posts (more than Graph's page of 25) reach the Page
// or the Instagram account between the lost answer and the retry, so the post is only found by
// paging back to the first attempt. The others are made by the fake in the same instant the answer
// is lost (`onRequest`), so the retry always comes after all of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fakes/graph/index.ts';
import { IG, PAGE, requestsTo, type SocialWorld, schedule, settled, socialWorld } from '../helpers/social.ts';

let w: SocialWorld;
/** Run once, right after the fake performed a POST to this edge and dropped its answer. */
let afterLost: { edge: string; run: () => void } | null = null;
const onRequest = (r: RecordedRequest) => {
  if (!afterLost || r.method !== 'POST' || r.response !== null || !r.path.endsWith(`/${afterLost.edge}`))
    return;
  const { run } = afterLost;
  afterLost = null;
  run();
};
beforeAll(async () => {
  w = await socialWorld({}, { onRequest });
});
afterAll(async () => {
  await w?.stop();
});

const OTHERS = 30;
const othersOn = (account: string) => () => {
  for (let i = 0; i < OTHERS; i++) w.graph.postElsewhere(account, `Someone else’s post ${i + 1}`);
};
/** The look-ups' reads of an account's listing. */
const listings = (edge: string) =>
  w.graph.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/${edge}`));

describe('a lost answer, then more than a page of other posts before the retry', () => {
  it('Facebook: the retry pages back to the post the lost call made, and the Page shows it once', async () => {
    const message = 'Published during a busy hour';
    afterLost = { edge: 'feed', run: othersOn(PAGE) };
    w.graph.failNext(1, 'lost');
    const post = await schedule(w, 'facebook', { message });
    const s = await settled(w, post.id);

    expect(s.status).toBe('published');
    const onPage = w.graph.published(PAGE);
    const copies = onPage.filter((o) => o.text === message);
    expect(copies).toHaveLength(1);
    // What the lost call made is what the post records: its id and link work.
    expect(s.provider_post_id).toBe(copies[0]?.id);
    expect(s.permalink).toBe(copies[0]?.permalink);
    // The premise: all 30 others are newer than the post, so it was past the first page.
    expect(onPage.slice(onPage.indexOf(copies[0] as (typeof onPage)[number]) + 1)).toHaveLength(OTHERS);
    expect(
      requestsTo(w.graph, PAGE, 'feed').filter((r) => (r.body as { message?: string }).message === message),
    ).toHaveLength(1);
    // Graph's paging links carry the access token; the look-up sends it in the header only.
    expect(listings('published_posts').length).toBeGreaterThan(0);
    for (const r of listings('published_posts')) expect(r.query.access_token).toBeUndefined();
  });

  it('Instagram: the container was published; the retry pages back to the media and records it', async () => {
    const caption = 'Reel during a busy hour';
    const post = await schedule(w, 'instagram', {
      message: caption,
      media: [{ path: 'busy.jpg', mime: 'image/jpeg' }],
    });
    // The container is made; media_publish's answer is lost, and 30 other media follow.
    afterLost = { edge: 'media_publish', run: othersOn(IG) };
    w.graph.failNext(1, 'pass');
    w.graph.failNext(1, 'lost');
    const s = await settled(w, post.id);

    expect(s.status).toBe('published');
    const media = w.graph.published(IG);
    const copies = media.filter((o) => o.text === caption);
    expect(copies).toHaveLength(1);
    expect(media.slice(media.indexOf(copies[0] as (typeof media)[number]) + 1)).toHaveLength(OTHERS);
    // Without its id the post would have no link and no metrics.
    expect(s.provider_post_id).toBe(copies[0]?.id);
    expect(s.permalink).toBe(copies[0]?.permalink);
    expect(requestsTo(w.graph, IG, 'media_publish')).toHaveLength(1);
  });
});

// The look-back before posting again (src/channels/graph-find-post.ts), against a listing made up
// page by page: it follows `next` back to the first attempt and no further, whether or not Graph
// honoured `since`; it takes only a post with the same text created since then; it gives up
// (permanently, without posting) at its page ceiling or on a cursor that comes round again; and a
// failed read is the failure, never "not there".
import { describe, expect, it } from 'vitest';
import { findOwnPost, LOOKBACK_EXHAUSTED } from '../../src/channels/graph-find-post.ts';
import type { GraphPublisher, PostsPage, RecentPost } from '../../src/channels/graph-publish.ts';

const account = { externalId: '1045', accessToken: 'EAA-token' };
const started = Date.parse('2026-11-24T06:00:00Z');
/** Graph's time format, `minutes` after the first attempt began (negative: before). */
const at = (minutes: number) => `${new Date(started + minutes * 60_000).toISOString().slice(0, 19)}+0000`;
const post = (id: string, text: string, minutes: number): RecentPost => ({
  id,
  text,
  created_at: at(minutes),
  permalink: `https://www.facebook.com/1045/posts/${id}`,
});

/** A listing of these pages, newest first; `next` of page i names page i + 1 (or `loopTo`). */
function listing(pages: RecentPost[][], loopTo?: number) {
  const asked: Parameters<GraphPublisher['accountPosts']>[2][] = [];
  const graph = {
    async accountPosts(_platform, _account, page) {
      asked.push(page);
      const i = 'next' in page ? Number(page.next.after) : 0;
      const next = i + 1 < pages.length ? String(i + 1) : loopTo === undefined ? null : String(loopTo);
      const value: PostsPage = { posts: pages[i] ?? [], next: next === null ? null : { after: next } };
      return { ok: true, value };
    },
  } as Pick<GraphPublisher, 'accountPosts'> as GraphPublisher;
  return { graph, asked };
}
const others = (from: number, n: number, minutes: number) =>
  Array.from({ length: n }, (_, k) => post(`o${from + k}`, `Other ${from + k}`, minutes));

describe('findOwnPost', () => {
  it('pages back past other posts to the one the lost call made', async () => {
    const { graph, asked } = listing([
      others(1, 25, 9),
      [...others(26, 5, 8), post('mine', 'Hello', 0), ...others(31, 3, -30)],
    ]);
    const found = await findOwnPost(graph, 'facebook', account, 'Hello', at(0));
    expect(found).toEqual({ ok: true, value: post('mine', 'Hello', 0) });
    // The first page asks Graph for posts since the attempt, less two minutes for clocks.
    expect(asked[0]).toEqual({ since: new Date(started - 120_000) });
    expect(asked[1]).toEqual({ next: { after: '1' } });
  });

  it('stops at the first page that reaches before the first attempt, even if Graph offers more', async () => {
    const { graph, asked } = listing([others(1, 25, 5), others(26, 25, -10), others(51, 25, -60)]);
    expect(await findOwnPost(graph, 'facebook', account, 'Hello', at(0))).toEqual({ ok: true, value: null });
    expect(asked).toHaveLength(2);
  });

  it('does not take a post with the same text made before the first attempt (less the margin)', async () => {
    const { graph } = listing([[post('old', 'Hello', -3)]]);
    expect(await findOwnPost(graph, 'instagram', account, 'Hello', at(0))).toEqual({ ok: true, value: null });
  });

  it('gives up at its ceiling without calling the post absent, after reading no more than the ceiling', async () => {
    const { graph, asked } = listing(Array.from({ length: 60 }, (_, p) => others(p * 25, 25, 60 - p)));
    const r = await findOwnPost(graph, 'facebook', account, 'Hello', at(0), {
      clockSlackMs: 120_000,
      maxPages: 40,
    });
    expect(r).toMatchObject({ ok: false, transient: false, error: { type: LOOKBACK_EXHAUSTED } });
    expect(asked).toHaveLength(40);
  });

  it('gives up on a cursor that comes round again instead of reading forever', async () => {
    const { graph, asked } = listing([others(1, 25, 9), others(26, 25, 8), others(51, 25, 7)], 1);
    const r = await findOwnPost(graph, 'facebook', account, 'Hello', at(0));
    expect(r).toMatchObject({ ok: false, error: { type: LOOKBACK_EXHAUSTED } });
    expect(asked.length).toBeLessThan(10);
  });

  it('a failed read is returned as the failure, so the caller retries rather than posts blind', async () => {
    const failure = {
      ok: false as const,
      transient: true,
      status: 500,
      error: { code: 2, subcode: null, type: 'OAuthException', message: 'x', fbtrace_id: null },
    };
    const graph = { accountPosts: async () => failure } as unknown as GraphPublisher;
    expect(await findOwnPost(graph, 'facebook', account, 'Hello', at(0))).toBe(failure);
  });
});

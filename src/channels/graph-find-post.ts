// Finding a post an earlier attempt made, when its answer was lost: Graph takes no idempotency key,
// so before posting again the publisher reads the account's posts (graph-publish.ts
// `accountPosts`) back to the first attempt and looks for one with the same text. It pages back by
// time, not by count: however many posts reached the account since (a busy Page, another tool),
// the look ends only once it has seen everything created since the first attempt, less a margin
// for clocks. Takes the publisher, the account, the text and when the first attempt began; gives
// the post, null (not there), or a failure. docs/social.md, "Publishing once".
import type { GraphAccount } from './graph-client.ts';
import { type GraphFailure, refusedHere } from './graph-errors.ts';
import type { GraphPublisher, ReadResult, RecentPost } from './graph-publish.ts';

export const LOOKBACK = {
  /** Meta's clock and ours differ: a post may carry a time a little before our attempt began. */
  clockSlackMs: 120_000,
  /**
   * 40 pages of 25: 1,000 posts on one account since the first attempt, which retries end within
   * a day. Beyond it (or on a cursor that comes round again) the look gives up without posting.
   */
  maxPages: 40,
};

/** The failure a look-back that hit its ceiling ends with: permanent, the post is not posted again. */
export const LOOKBACK_EXHAUSTED = 'lookback_exhausted';

/** Graph writes times as 2026-11-24T06:00:00+0000, which Date.parse does not read everywhere. */
export const parseGraphTime = (s: string) => Date.parse(s.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));

export async function findOwnPost(
  graph: GraphPublisher,
  platform: 'facebook' | 'instagram',
  account: GraphAccount,
  text: string | null,
  startedAt: string,
  limits = LOOKBACK,
): Promise<ReadResult<RecentPost | null>> {
  const since = Date.parse(startedAt) - limits.clockSlackMs;
  const same = (s: string | null) => (s ?? '').trim() === (text ?? '').trim();
  const seen = new Set<string>();
  let page: Parameters<GraphPublisher['accountPosts']>[2] = { since: new Date(since) };
  for (let n = 1; ; n++) {
    const r = await graph.accountPosts(platform, account, page);
    if (!r.ok) return r;
    const { posts, next } = r.value;
    const mine = posts.find((p) => parseGraphTime(p.created_at) >= since && same(p.text));
    if (mine) return { ok: true, value: mine };
    // Newest first: once a page ends before the first attempt, nothing further back can be ours.
    // (Graph already leaves those out when it honours `since`; this holds if it does not.)
    const oldest = posts.at(-1);
    if (!next || !oldest || parseGraphTime(oldest.created_at) < since) return { ok: true, value: null };
    const key = JSON.stringify(next);
    if (n >= limits.maxPages || seen.has(key)) return exhausted(n, posts.length);
    seen.add(key);
    page = { next };
  }
}

const exhausted = (pages: number, perPage: number): GraphFailure =>
  refusedHere(
    LOOKBACK_EXHAUSTED,
    `Could not tell whether an earlier attempt published this post: ${pages} pages (about ${pages * perPage} posts) of the account were read without reaching the time it began. Not posted again, to avoid a duplicate: check the account.`,
  );

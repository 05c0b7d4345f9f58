// The fake's account listings, `GET /{page-id}/published_posts` and `GET /{ig-user-id}/media`,
// paged as Graph pages them (docs/graph-api.md, "Paging"): newest first, `limit` items a page
// (25 unless asked, at most 100), `since`/`until` (unix seconds) bounding the creation time, and
// cursor paging: `paging.cursors.{before,after}` (base64 of the first and last item's id) with
// `previous`/`next` links carrying every parameter of the request, the access token included, as
// Graph's links do. There is no `next` on the last page: that, not a short page, is the end.
// Development and tests only.
import { type Fault, graphError } from './faults.ts';
import type { FakeObject } from './objects.ts';

/** Builds a link to this same edge with these parameters (the server knows its host and the token). */
export type LinkTo = (query: Record<string, string>) => string;

const cursorOf = (id: string) => Buffer.from(id).toString('base64');
const idOf = (cursor: string) => Buffer.from(cursor, 'base64').toString('utf8');
/** Graph takes unix seconds (or a strtotime string; an ISO date stands in for those here). */
const instant = (v: string | undefined) =>
  v === undefined ? null : /^\d+$/.test(v) ? Number(v) * 1000 : Date.parse(v);
const createdAt = (o: FakeObject) => Date.parse(o.created_time.replace(/([+-]\d\d)(\d\d)$/, '$1:$2'));

export function listPage(
  all: Iterable<FakeObject>,
  account: string,
  edge: 'published_posts' | 'media',
  query: Record<string, string>,
  link: LinkTo,
): Fault {
  const since = instant(query.since);
  const until = instant(query.until);
  if (Number.isNaN(since) || Number.isNaN(until))
    return graphError(400, 100, '(#100) Invalid parameter: since and until take a time', 'OAuthException');
  const limit = Math.min(Math.max(Number.parseInt(query.limit ?? '25', 10) || 25, 1), 100);
  const list = [...all]
    .filter(
      (p) =>
        p.owner === account &&
        p.published &&
        (edge === 'media' ? p.kind === 'media' : p.kind !== 'media') &&
        (since === null || createdAt(p) >= since) &&
        (until === null || createdAt(p) <= until),
    )
    // Made later is newer: objects keep their creation order, and a second holds many.
    .reverse();
  let start = 0;
  let end = list.length;
  if (query.after !== undefined || query.before !== undefined) {
    const at = list.findIndex((p) => p.id === idOf(query.after ?? query.before ?? ''));
    // A cursor is invalidated when its item is gone (Graph's own caveat): refuse it, never loop.
    if (at < 0) return graphError(400, 100, '(#100) Invalid cursor', 'OAuthException');
    if (query.after !== undefined) start = at + 1;
    else end = at;
  }
  if (query.before !== undefined) start = Math.max(0, end - limit);
  const page = list.slice(start, Math.min(end, start + limit));
  const fb = edge === 'published_posts';
  const data = page.map((p) =>
    fb
      ? { id: p.id, message: p.text ?? undefined, created_time: p.created_time, permalink_url: p.permalink }
      : { id: p.id, caption: p.text ?? undefined, timestamp: p.created_time, permalink: p.permalink },
  );
  const first = page[0];
  const last = page.at(-1);
  if (!first || !last) return { status: 200, body: { data } };
  const { after: _a, before: _b, ...rest } = query;
  const more = start + page.length < list.length;
  return {
    status: 200,
    body: {
      data,
      paging: {
        cursors: { before: cursorOf(first.id), after: cursorOf(last.id) },
        ...(start > 0
          ? { previous: link({ ...rest, limit: String(limit), before: cursorOf(first.id) }) }
          : {}),
        ...(more ? { next: link({ ...rest, limit: String(limit), after: cursorOf(last.id) }) } : {}),
      },
    },
  };
}

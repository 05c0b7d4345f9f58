/**
 * Keyset cursors for the big lists (contacts, orders, inventory, agent sign-in attempts), newest
 * first: `created_at desc, id desc`, the order the lists' indexes keep (migrations/0011, 0003).
 * A page starts after the last row of the page before it, so reading page 4,000 reads 25 rows
 * of the index, not the 100,000 an OFFSET skips (docs/decisions.md, "Dashboard lists on keyset
 * cursors").
 */

/** Where a page starts: after this row (the previous page's last), or at the top when null. */
export type Cursor = { created_at: string; id: string };
type Keyed = { created_at: string; id: string | number };

/** The cursor as the URL's `after` carries it: the row's created_at as the service wrote it, and its id. */
export const cursorText = (row: Keyed) => `${row.created_at},${row.id}`;

// What the service writes for a timestamptz (ISO 8601 with an offset) and what ids look like
// (uuid, or an identity number): a cursor edited into something else is not sent, the list
// starts at the top instead. The values are quoted in or=(…) below, and these shapes hold no quote.
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}(:?\d{2})?)$/;
const ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{1,19})$/i;

export function parseCursor(text: string): Cursor | null {
  const comma = text.lastIndexOf(',');
  const created_at = text.slice(0, comma);
  const id = text.slice(comma + 1);
  return comma > 0 && TIMESTAMP.test(created_at) && ID.test(id) ? { created_at, id } : null;
}

/** The filters of a postgrest-js query that a cursor adds (every builder has them). */
export interface Bounded<Q> {
  lte(column: 'created_at', value: string): Q;
  gte(column: 'created_at', value: string): Q;
  or(filters: string): Q;
}

/**
 * The rows after `c` in the list's order: `(created_at, id) < (c.created_at, c.id)`, written as
 * `created_at <= c` (the index's range condition: the scan starts at the cursor) and the tie-break
 * `created_at < c or id < c.id`, which only rows of the cursor's own instant still need. A row
 * comparison or the `or` alone would be a filter over every row the scan passes.
 */
export const olderThan = <Q extends Bounded<Q>>(q: Q, c: Cursor): Q =>
  q.lte('created_at', c.created_at).or(`created_at.lt."${c.created_at}",id.lt.${c.id}`);

/** The rows before `c` (newer), for a page reached without the pages before it: read oldest first. */
export const newerThan = <Q extends Bounded<Q>>(q: Q, c: Cursor): Q =>
  q.gte('created_at', c.created_at).or(`created_at.gt."${c.created_at}",id.gt.${c.id}`);

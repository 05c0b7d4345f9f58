import type { Queryable } from '../platform/db/database.ts';
import type { Params } from '../platform/db/params.ts';

// The substring filters of the list tools ask the search views of migrations/0037 first (the same
// views /rest/v1 asks, src/rest/sql.ts): under RLS the planner may not serve `ilike '%…%'` from a
// trigram index, the view's query may. The ids found are then read from the table under RLS, with
// the tool's own conditions checked again there.

/** Each searchable table's view (its search text holds every field the list tools filter on). */
export const SEARCH_VIEW = {
  contacts: 'app.contact_search',
  orders: 'app.order_search',
  inventory_items: 'app.inventory_item_search',
} as const;

/** Above this many matches the page is found as fast by reading the table newest first. */
export const MAX_CANDIDATES = 1000;

/**
 * A condition on `alias.id` limiting the rows to those whose search text contains every one of
 * `terms` (literally, whatever case), or nothing when the index cannot help: no term of three
 * characters (a trigram needs three), or more than MAX_CANDIDATES matches.
 */
export async function searchCandidates(
  tx: Queryable,
  table: keyof typeof SEARCH_VIEW,
  alias: string,
  terms: string[],
  p: Params,
): Promise<string[]> {
  const usable = terms.map((t) => t.trim()).filter((t) => t.length >= 3);
  if (!usable.length) return [];
  // app.like_contains escapes the term: a well-formed pattern cannot raise on another tenant's row.
  const conds = usable.map((_, i) => `s.search_text like app.like_contains($${i + 1})`);
  const [row] = await tx.query<{ ids: string[] }>(
    `select coalesce(array_agg(s.id), '{}') as ids
       from (select s.id from ${SEARCH_VIEW[table]} s where ${conds.join(' and ')} limit ${MAX_CANDIDATES + 1}) s`,
    usable,
  );
  const ids = row?.ids ?? [];
  return ids.length > MAX_CANDIDATES ? [] : [`${alias}.id = any (${p.add(ids)}::uuid[])`];
}

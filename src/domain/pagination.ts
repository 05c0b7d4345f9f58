import { claimedOrganization, type Principal, type Queryable } from '../platform/db/database.ts';
import type { Params } from '../platform/db/params.ts';
import { invalidField } from '../platform/errors.ts';
import type { Deps } from './deps.ts';

// Keyset pagination, newest first, over (created_at, id), or over another timestamp column and id
// (conversations: last_message_at). The cursor is opaque to callers: the position of the last row
// they saw, so pages stay stable while new rows arrive.

export const DEFAULT_PAGE = 25;
export const MAX_PAGE = 100;

/** Where a page ends: the last row's position (its ordering timestamp and id). */
type Position = { at: string; id: string };

function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify([p.at, p.id])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): Position | null {
  if (cursor === undefined || cursor === '') return null;
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      typeof at === 'string' &&
      !Number.isNaN(Date.parse(at)) &&
      typeof id === 'string' &&
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)
    ) {
      return { at, id };
    }
  } catch {}
  throw invalidField(
    'cursor',
    'Not a cursor this service issued; pass next_cursor unchanged',
    'The cursor is not valid',
  );
}

/**
 * One page, newest first, of the rows of `from` (a table and its alias, `public.contacts c`)
 * filtered by `where` (fragments whose values are in `p`), after `cursor`, each row turned into
 * JSON by `row` (an expression over the alias). Fetches one row more than a page: that row only
 * tells whether another page follows.
 *
 * The page is chosen first and only its rows become JSON: building the record of every row of the
 * tenant before the top-N sort cost 500 ms at 100,000 contacts. The order (created_at desc, id
 * desc) and the cursor's row comparison are those of the (organization_id, created_at desc, id
 * desc) indexes, so a page is read straight off the index (docs/data-model.md). `by` names
 * another timestamp column to order by; an index (organization_id, <by> desc, id desc) serves it.
 */
export async function listPage<T extends { id: string }>(
  deps: Pick<Deps, 'db'>,
  principal: Principal,
  q: {
    from: string;
    alias: string;
    row: string;
    where: string[];
    p: Params;
    cursor?: string;
    limit: number;
    by?: 'created_at' | 'last_message_at';
    /** More conditions found in the page's own transaction first (search candidates: search-candidates.ts). */
    narrow?: (tx: Queryable) => Promise<string[]>;
  },
) {
  const a = q.alias;
  const by = q.by ?? 'created_at';
  // The tenant again, as a value: RLS already limits the rows to it (and stays the guard), but its
  // predicate is a function the planner cannot see through, so it estimated every tenant at a
  // share of the table and picked plans for a small one.
  const org = claimedOrganization(principal);
  const where = org ? [`${a}.organization_id = ${q.p.add(org)}::uuid`, ...q.where] : [...q.where];
  const after = decodeCursor(q.cursor);
  if (after) {
    where.push(`(${a}.${by}, ${a}.id) < (${q.p.add(after.at)}::timestamptz, ${q.p.add(after.id)}::uuid)`);
  }
  const newestFirst = `order by ${a}.${by} desc, ${a}.id desc`;
  const limit = q.p.add(q.limit + 1);
  const sql = (conds: string[]) => `select ${q.row} as r
    from (select ${a}.* from ${q.from} ${conds.length ? `where ${conds.join(' and ')}` : ''}
          ${newestFirst} limit ${limit}) ${a}
    ${newestFirst}`;
  const { narrow } = q;
  // Without candidates to find first, the page is one statement: sent with the claims as one
  // implicit transaction (db.queryAs), as /rest/v1 reads are, instead of begin, claims, read, commit.
  const rows = narrow
    ? await deps.db.asPrincipal(
        principal,
        async (tx) => tx.query<{ r: T }>(sql([...where, ...(await narrow(tx))]), q.p.values),
        { readOnly: true },
      )
    : await deps.db.queryAs<{ r: T }>(principal, sql(where), q.p.values, { readOnly: true });
  const items = rows.slice(0, q.limit).map((x) => x.r);
  const last = items[items.length - 1];
  const more = rows.length > q.limit && last;
  return {
    items,
    next_cursor: more
      ? encodeCursor({ at: String((last as Record<string, unknown>)[by]), id: last.id })
      : null,
  };
}

/** A LIKE pattern that matches `term` literally. */
export const likeEscape = (term: string) => term.replace(/[\\%_]/g, (ch) => `\\${ch}`);

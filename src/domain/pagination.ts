import type { Database, Principal } from '../platform/db/database.ts';
import type { Params } from '../platform/db/params.ts';
import { validationError } from '../platform/errors.ts';

// Keyset pagination, newest first, over (created_at, id). The cursor is opaque to callers: the
// position of the last row they saw, so pages stay stable while new rows arrive.

export const DEFAULT_PAGE = 25;
export const MAX_PAGE = 100;

/** Where a page ends: the last row's position. */
type Row = { created_at: string; id: string };

function encodeCursor(p: Row): string {
  return Buffer.from(JSON.stringify([p.created_at, p.id])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): Row | null {
  if (cursor === undefined || cursor === '') return null;
  try {
    const [created_at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      typeof created_at === 'string' &&
      !Number.isNaN(Date.parse(created_at)) &&
      typeof id === 'string' &&
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)
    ) {
      return { created_at, id };
    }
  } catch {}
  throw validationError(
    [{ path: 'cursor', message: 'Not a cursor this service issued; pass next_cursor unchanged' }],
    'The cursor is not valid',
  );
}

/**
 * One page, newest first, of `select <record as json> as r from <table> <alias>` filtered by
 * `where` (fragments whose values are in `p`), after `cursor`. Fetches one row more than a page:
 * that row only tells whether another page follows.
 */
export async function listPage<T extends Row>(
  db: Database,
  principal: Principal,
  q: { select: string; alias: string; where: string[]; p: Params; cursor?: string; limit: number },
) {
  const where = [...q.where];
  const after = decodeCursor(q.cursor);
  if (after) {
    where.push(
      `(${q.alias}.created_at, ${q.alias}.id) < (${q.p.add(after.created_at)}::timestamptz, ${q.p.add(after.id)}::uuid)`,
    );
  }
  const sql = `${q.select} ${where.length ? `where ${where.join(' and ')}` : ''}
    order by ${q.alias}.created_at desc, ${q.alias}.id desc limit ${q.p.add(q.limit + 1)}`;
  const rows = await db.asPrincipal(principal, (tx) => tx.query<{ r: T }>(sql, q.p.values), {
    readOnly: true,
  });
  const items = rows.slice(0, q.limit).map((x) => x.r);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > q.limit && last ? encodeCursor(last) : null };
}

/** A LIKE pattern that matches `term` literally. */
export const likeEscape = (term: string) => term.replace(/[\\%_]/g, (ch) => `\\${ch}`);

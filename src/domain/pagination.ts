import { validationError } from '../platform/errors.ts';

// Keyset pagination, newest first, over (created_at, id). The cursor is opaque to callers: the
// position of the last row they saw, so pages stay stable while new rows arrive.

export const DEFAULT_PAGE = 25;
export const MAX_PAGE = 100;

type Position = { created_at: string; id: string };

export function encodeCursor(p: Position): string {
  return Buffer.from(JSON.stringify([p.created_at, p.id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): Position | null {
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
 * Adds the keyset condition to `where` (SQL fragments with $n placeholders) and returns the ORDER
 * BY and LIMIT that fetch one row more than a page, which tells whether another page follows.
 */
export function keyset(
  alias: string,
  cursor: string | undefined,
  limit: number,
  where: string[],
  params: unknown[],
): string {
  const after = decodeCursor(cursor);
  if (after) {
    params.push(after.created_at, after.id);
    where.push(
      `(${alias}.created_at, ${alias}.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`,
    );
  }
  params.push(limit + 1);
  return `order by ${alias}.created_at desc, ${alias}.id desc limit $${params.length}`;
}

/** The page and its next_cursor from rows fetched with `keyset`. */
export function page<T extends { created_at: string; id: string }>(rows: T[], limit: number) {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? encodeCursor(last) : null };
}

/** A LIKE pattern that matches `term` literally. */
export const likeEscape = (term: string) => term.replace(/[\\%_]/g, (ch) => `\\${ch}`);

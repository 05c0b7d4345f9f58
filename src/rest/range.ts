import { rangeNotSatisfiable } from './errors.ts';

export const DEFAULT_PAGE = 25;
export const MAX_PAGE = 100;

/**
 * The rows to read, from `limit`/`offset` (what postgrest-js sends) or a `Range: a-b` header;
 * never more than MAX_PAGE, whatever was asked (Content-Range then tells the truth).
 */
export function pageOf(q: { limit?: number; offset?: number }, rangeHeader: string | undefined) {
  let offset = q.offset ?? 0;
  let limit = q.limit ?? DEFAULT_PAGE;
  const range = rangeHeader && /^(?:items=)?(\d+)-(\d*)$/.exec(rangeHeader.trim());
  if (range && q.offset === undefined && q.limit === undefined) {
    offset = Number(range[1]);
    if (range[2] !== '') {
      const last = Number(range[2]);
      if (last < offset) throw rangeNotSatisfiable('The Range header ends before it starts');
      limit = last - offset + 1;
    }
  }
  return { offset, limit: Math.min(limit, MAX_PAGE) };
}

/** `first-last/total` with `*` for an unknown total and for an empty page, as PostgREST writes it. */
export function contentRange(offset: number, returned: number, total: number | null): string {
  const span = returned > 0 ? `${offset}-${offset + returned - 1}` : '*';
  return `${span}/${total ?? '*'}`;
}

/** 200, 206 when a counted read returned only part of the total, 416 past the end. */
export function readStatus(offset: number, returned: number, total: number | null): 200 | 206 | 416 {
  if (total === null) return 200;
  if (returned === 0 && offset > 0 && offset >= total) return 416;
  return returned < total ? 206 : 200;
}

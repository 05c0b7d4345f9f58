/**
 * Keyset cursors for the big lists (contacts, orders, inventory, agent sign-in attempts) in the
 * order of a sort column and the id, either way: newest first (`created_at desc, id desc`) unless
 * a sortable header was clicked. A page starts after the last row of the page before it, so
 * reading page 4,000 reads 25 rows of an index on (organization_id, column, id), not the 100,000
 * an OFFSET skips (docs/decisions.md, "Dashboard lists on keyset cursors" and "Sorting the
 * contacts and orders tables").
 */

/** The order of a list: a column of its table, then the id the same way. */
export type Sort = { column: string; descending: boolean };
/** What a sort column holds: how a cursor value is checked, and whether it may be null. */
export type SortKind = { kind: 'time' | 'number' | 'text'; nullable: boolean };
export const NEWEST_FIRST: Sort = { column: 'created_at', descending: true };
const CREATED: SortKind = { kind: 'time', nullable: false };

/** `email.asc` as the URL's `sort` carries it; anything else is the list's default order. */
export const sortText = (s: Sort) => `${s.column}.${s.descending ? 'desc' : 'asc'}`;
export function parseSort(text: string, allowed: readonly string[]): Sort | null {
  const m = /^([a-z_]+)\.(asc|desc)$/.exec(text);
  return m && allowed.includes(m[1] as string)
    ? { column: m[1] as string, descending: m[2] === 'desc' }
    : null;
}

/** Where a page starts: after the row with this sort value (null: a row without one) and id. */
export type Cursor = { value: string | null; id: string };
type Keyed = { id: string | number; [column: string]: unknown };

// What the service writes for a timestamptz (ISO 8601 with an offset), a number, and what ids look
// like (uuid, or an identity number): a cursor edited into something else is not sent, the list
// starts at the top instead.
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}(:?\d{2})?)$/;
const NUMBER = /^-?\d{1,20}(\.\d{1,10})?$/;
const ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{1,19})$/i;
const VALUE = { time: TIMESTAMP, number: NUMBER, text: /^[\s\S]{0,1000}$/ };

/**
 * The cursor as the URL's `after` carries it. Newest first it stays `<created_at>,<id>` (links
 * made before sorting keep working); in another order it is the JSON `[value, id]`, which holds
 * any text, a comma or a quote included, and null.
 */
export function cursorText(row: Keyed, sort: Sort = NEWEST_FIRST): string {
  const value = row[sort.column];
  if (sort.column === NEWEST_FIRST.column) return `${value},${row.id}`;
  return JSON.stringify([value === null || value === undefined ? null : String(value), String(row.id)]);
}

/** The cursor in `text` if it is one for a column of this kind, else null (the first page). */
export function parseCursor(text: string, kind: SortKind = CREATED): Cursor | null {
  let value: unknown;
  let id: unknown;
  if (text.startsWith('[')) {
    try {
      [value, id] = JSON.parse(text) as unknown[];
    } catch {
      return null;
    }
  } else {
    const comma = text.lastIndexOf(',');
    if (comma <= 0) return null;
    [value, id] = [text.slice(0, comma), text.slice(comma + 1)];
  }
  if (typeof id !== 'string' || !ID.test(id)) return null;
  if (value === null) return kind.nullable ? { value, id } : null;
  return typeof value === 'string' && VALUE[kind.kind].test(value) ? { value, id } : null;
}

/** Whether `text` is a cursor of any list (the URL keeps its page number only then). */
export const isCursor = (text: string) => parseCursor(text, { kind: 'text', nullable: true }) !== null;

/** The filters of a postgrest-js query that a cursor adds (every builder has them). */
export interface Bounded<Q> {
  lte(column: string, value: string): Q;
  gte(column: string, value: string): Q;
  lt(column: string, value: string): Q;
  gt(column: string, value: string): Q;
  is(column: string, value: null): Q;
  not(column: string, operator: string, value: null): Q;
  or(filters: string): Q;
}

/**
 * One read of a keyset page: the filters it adds to the list's own, and its order. A page may take
 * two: ascending, the rows with a value come first and those without after them (PostgreSQL's
 * `nulls last`), so a page that runs out of values goes on with the nulls; descending is the
 * mirror (nulls first). Each read is a range of the index (organization_id, column, id), read
 * either way: `column >= v` (the scan's start) with the tie-break `column > v or id > id` that
 * only rows of the cursor's own value reach, or `column is null` with `id > id`. A row comparison
 * is not a PostgREST filter, and an `or` holding `is null` would be a filter over every row the
 * scan passes, not a range.
 */
export type Segment<Q> = { filter(q: Q): Q; order: { column: string; ascending: boolean }[] };

// Quoted inside or=(…): a backslash and a double quote escaped, as PostgREST reads them.
const quoted = (v: string) => `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

export function segments<Q extends Bounded<Q>>(sort: Sort, kind: SortKind, c: Cursor | null): Segment<Q>[] {
  const { column, descending } = sort;
  const ascending = !descending;
  const order = [
    { column, ascending },
    { column: 'id', ascending },
  ];
  const all: Segment<Q> = { filter: (q) => q, order };
  const nulls = (after: string | null): Segment<Q> => ({
    filter: (q) => {
      const none = q.is(column, null);
      return after === null ? none : ascending ? none.gt('id', after) : none.lt('id', after);
    },
    order,
  });
  const values = (after: Cursor | null): Segment<Q> => ({
    filter: (q) => {
      if (!after) return q.not(column, 'is', null);
      const v = after.value as string;
      return ascending
        ? q.gte(column, v).or(`${column}.gt.${quoted(v)},id.gt.${after.id}`)
        : q.lte(column, v).or(`${column}.lt.${quoted(v)},id.lt.${after.id}`);
    },
    order,
  });
  if (!c) return [all];
  if (!kind.nullable) return [values(c)];
  if (ascending) return c.value === null ? [nulls(c.id)] : [values(c), nulls(null)];
  return c.value === null ? [nulls(c.id), values(null)] : [values(c)];
}

/** The same order the other way round (nulls on the other side too): for the rows before a page. */
export const reversed = (s: Sort): Sort => ({ column: s.column, descending: !s.descending });

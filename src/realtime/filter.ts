/**
 * A `postgres_changes` filter as Supabase Realtime takes it: `column=op.value`, op one of eq, neq,
 * lt, lte, gt, gte, or `in.(a,b,c)` (at most 100 values). Parsed once at join into a plain value;
 * applied in SQL beside the row's read (changes.ts), so the value is compared as the column's own
 * type (a number, a timestamp, a uuid) exactly as the database compares it.
 */

export type Op = 'eq' | 'neq' | 'lt' | 'lte' | 'gt' | 'gte' | 'in';
export type Filter = { column: string; op: Op; value: string | string[] };

const SQL_OP: Record<Exclude<Op, 'in'>, string> = {
  eq: '=',
  neq: '<>',
  lt: '<',
  lte: '<=',
  gt: '>',
  gte: '>=',
};
const MAX_IN = 100;

/** The filter of `text`, or an error's message; an empty filter is none (every row). */
export function parseFilter(text: string, columns: ReadonlySet<string>): Filter | null | string {
  if (text === '') return null;
  const m = /^([^=]+)=(eq|neq|lt|lte|gt|gte|in)\.(.*)$/s.exec(text);
  if (!m) return `The filter "${text}" is not column=op.value (op: eq, neq, lt, lte, gt, gte, in)`;
  const [, column, op, raw] = m as unknown as [string, string, Op, string];
  if (!columns.has(column)) return `The filter names "${column}", which the table does not have`;
  if (op !== 'in') return { column, op, value: raw };
  const list = /^\((.*)\)$/s.exec(raw)?.[1];
  if (list === undefined) return `The filter "${text}" needs its values in parentheses: in.(a,b)`;
  const values = list.split(',').map((v) => v.trim().replace(/^"(.*)"$/s, '$1'));
  if (values.length > MAX_IN) return `A filter takes at most ${MAX_IN} values`;
  return { column, op, value: values };
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The filter as a boolean over the row alias `t`, its value bound as parameter `$n` and read as
 * the column's `type` (a name from the catalog, src/rest/schema-cache.ts, never the client's).
 */
export function filterSql(f: Filter, type: string, n: number): { text: string; value: unknown } {
  const col = `t.${ident(f.column)}`;
  if (f.op === 'in') {
    // One parameter for the list: a text array, each element read as the column's type.
    const cast = type.endsWith('[]')
      ? `${col}::text = any($${n}::text[])`
      : `${col} = any($${n}::text[]::${type}[])`;
    return { text: cast, value: f.value };
  }
  return { text: `${col} ${SQL_OP[f.op]} $${n}::text::${type}`, value: f.value };
}

// A read's query string as a shape and its literals: `id=eq.3f2c…` is the shape `id=eq.` plus
// one literal, the same for every id. read.ts keeps plans and statements by shape, so reads of
// 2,000 different rows share one entry instead of each making (and evicting) its own; PostgREST
// prepares by shape too. Values were always bound parameters, so the statement's text is the
// shape's; only the bound values change.
//
// Only the literals of plain comparisons are taken out (`col=eq.v`, `gt`, `gte`, `lt`, `lte`,
// `neq`, negated or not, on the root or an embedded resource): the stages bind such a value
// verbatim and nothing else depends on it. Everything else (select, order, limit, offset, `or`,
// `is`, patterns, lists, quoted values) stays in the shape as sent. read.ts still checks, once per
// shape, that the statement made from the request and the one made with placeholders differ in
// exactly those values (`slotsOf`); a shape that fails the check is not shared.

/** Keys that are not a filter's column (parse.ts's RESERVED and the logic operators). */
const NOT_A_COLUMN = new Set(['select', 'order', 'limit', 'offset', 'or', 'and', 'columns', 'on_conflict']);
/** An embedded resource's own order, limit and logic are not filters either. */
const NOT_AN_EMBEDDED_COLUMN = new Set(['order', 'limit', 'or', 'and']);
const OPERATORS = ['eq.', 'neq.', 'gt.', 'gte.', 'lt.', 'lte.'];
/** Never in a query string as received (node refuses control characters in a request target). */
const SLOT = '\n';

/**
 * The length of a plain comparison's `[not.]op.` at the start of a decoded value, whose rest is
 * bound verbatim; 0 for anything else (a quoted value is unquoted, so it is not verbatim).
 */
function comparisonLength(value: string): number {
  const at = value.startsWith('not.') ? 4 : 0;
  for (const op of OPERATORS) {
    if (value.startsWith(op, at)) return value.charCodeAt(at + op.length) === 34 /* " */ ? 0 : at + op.length;
  }
  return 0;
}

/** URLSearchParams' decoding of one component; null where it would keep a malformed escape. */
function decoded(raw: string): string | null {
  if (!raw.includes('%') && !raw.includes('+')) return raw; // most names and values: nothing to do
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/**
 * A part (`key=value`) of a query string: its head up to the literal (the key as sent, then the
 * operator) and the literal decoded, or null when the part has no literal to take out.
 */
function literalOf(part: string): { head: string; literal: string } | null {
  const eq = part.indexOf('=');
  if (eq < 0) return null;
  const key = decoded(part.slice(0, eq));
  const value = decoded(part.slice(eq + 1));
  if (key === null || value === null || NOT_A_COLUMN.has(key) || key.startsWith('not.')) return null;
  const dot = key.lastIndexOf('.');
  if (dot >= 0 && NOT_AN_EMBEDDED_COLUMN.has(key.slice(dot + 1))) return null;
  const op = comparisonLength(value);
  if (op === 0) return null;
  // The operator's letters and dots read the same encoded or not.
  return { head: `${part.slice(0, eq)}=${value.slice(0, op)}`, literal: value.slice(op) };
}

/**
 * A read's query string as a shape: `key` is the query string with each literal replaced by SLOT,
 * `literals` the literals, decoded as URLSearchParams decodes them, in order.
 */
export class Shape {
  constructor(
    readonly search: string,
    readonly key: string,
    readonly literals: string[],
  ) {}

  /** The query string with `fill(i)` in place of literal i (encoded for a query string). */
  render(fill: (i: number) => string): string {
    let i = 0;
    return this.search
      .split('&')
      .map((part) => {
        const found = literalOf(part);
        return found ? found.head + encodeURIComponent(fill(i++)) : part;
      })
      .join('&');
  }
}

/** The shape of a query string, or null when it has no literal to take out. */
export function shapeOf(search: string): Shape | null {
  let key = '';
  const literals: string[] = [];
  let from = 0;
  while (from <= search.length) {
    let to = search.indexOf('&', from);
    if (to < 0) to = search.length;
    const part = search.slice(from, to);
    const found = literalOf(part);
    if (from > 0) key += '&';
    if (found) {
      key += found.head + SLOT;
      literals.push(found.literal);
    } else key += part;
    from = to + 1;
  }
  return literals.length ? new Shape(search, key, literals) : null;
}

/**
 * Where each literal went among a statement's bound values: `made` is the statement made from the
 * request, `marked` the one made with `marker(i)` for literal i. Null unless the two have the same
 * text and differ exactly in one value per literal (so the shape's statement is `made` with those
 * values replaced).
 */
/** Values of two statements made alike: a list (`in`) is a new array each time. */
const same = (a: unknown, b: unknown) =>
  a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

export function slotsOf(
  made: { text: string; values: unknown[] },
  marked: { text: string; values: unknown[] },
  literals: string[],
  marker: (i: number) => string,
): number[] | null {
  if (made.text !== marked.text || made.values.length !== marked.values.length) return null;
  const slots: number[] = literals.map(() => -1);
  for (const [k, v] of marked.values.entries()) {
    const i = literals.findIndex((_, j) => v === marker(j));
    if (i >= 0) {
      if (slots[i] !== -1 || made.values[k] !== literals[i]) return null;
      slots[i] = k;
    } else if (!same(v, made.values[k])) return null;
  }
  return slots.includes(-1) ? null : slots;
}

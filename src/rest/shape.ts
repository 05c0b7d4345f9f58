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
/** `[not.]op.` of a plain comparison, whose value is bound verbatim (a quoted one is unquoted). */
const COMPARISON = /^(not\.)?(eq|neq|gt|gte|lt|lte)\.(?!")/;
/** Never in a query string as received (node refuses control characters in a request target). */
const SLOT = '\n';

export type Shape = {
  /** The query string with each literal replaced by SLOT. */
  key: string;
  /** The literals, decoded as URLSearchParams decodes them, in order. */
  literals: string[];
  /** The query string with `fill(i)` in place of literal i (encoded for a query string). */
  render(fill: (i: number) => string): string;
};

/** URLSearchParams' decoding of one component; null where it would keep a malformed escape. */
function decoded(raw: string): string | null {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return null;
  }
}

/** The shape of a query string, or null when it has no literal to take out. */
export function shapeOf(search: string): Shape | null {
  const parts = search.split('&');
  const literals: string[] = [];
  const heads: string[] = []; // per part: its text up to the literal, or the whole part
  const slots: boolean[] = [];
  for (const part of parts) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? null : decoded(part.slice(0, eq));
    const value = eq < 0 ? null : decoded(part.slice(eq + 1));
    const last = key?.slice(key.lastIndexOf('.') + 1);
    const op = value === null || key === null || last === undefined ? null : COMPARISON.exec(value);
    if (!op || key === null || value === null || NOT_A_COLUMN.has(key) || key.startsWith('not.')) {
      heads.push(part);
      slots.push(false);
      continue;
    }
    // An embedded resource's own order and limit are not filters either.
    if (key.includes('.') && (last === 'order' || last === 'limit' || last === 'or' || last === 'and')) {
      heads.push(part);
      slots.push(false);
      continue;
    }
    heads.push(`${part.slice(0, eq)}=${encodeURIComponent(op[0])}`);
    slots.push(true);
    literals.push(value.slice(op[0].length));
  }
  if (!literals.length) return null;
  const render = (fill: (i: number) => string) => {
    let i = 0;
    return heads.map((h, k) => (slots[k] ? `${h}${encodeURIComponent(fill(i++))}` : h)).join('&');
  };
  return { key: render(() => SLOT), literals, render };
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

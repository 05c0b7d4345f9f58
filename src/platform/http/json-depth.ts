/**
 * How deep a parsed JSON value nests. V8's JSON.parse takes any depth, but JSON.stringify and
 * PostgreSQL's JSON parser recurse, so a body nested thousands deep ran either out of stack (a
 * 500). Callers refuse a body deeper than `MAX_JSON_DEPTH` before anything recurses over it.
 */

/** Far beyond any record this service stores, far below where either engine runs out of stack. */
export const MAX_JSON_DEPTH = 100;

/**
 * The path (`0.notes.a`) of the first value nested deeper than `limit`, or null. Iterative, so
 * measuring a deep value cannot itself overflow the stack.
 */
export function tooDeep(value: unknown, limit = MAX_JSON_DEPTH): string | null {
  const stack: { v: unknown; path: string[] }[] = [{ v: value, path: [] }];
  while (stack.length) {
    const { v, path } = stack.pop() as { v: unknown; path: string[] };
    if (typeof v !== 'object' || v === null) continue;
    if (path.length >= limit) return path.join('.');
    for (const [k, child] of Object.entries(v)) stack.push({ v: child, path: [...path, k] });
  }
  return null;
}

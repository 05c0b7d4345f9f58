import { notAcceptable } from './errors.ts';

// Content negotiation as PostgREST does it (RFC 7231 §5.3.2): the Accept header's media ranges
// in order of preference, the first this interface produces wins; none → 406 PGRST107.

export const SINGLE = 'application/vnd.pgrst.object+json';
export const CSV = 'text/csv';

/** What a /rest/v1 answer is written as: a JSON array, one JSON object, or CSV. */
export type Representation = 'json' | 'object' | 'csv';

const PRODUCED: Record<string, Representation> = {
  '*/*': 'json',
  'application/*': 'json',
  'application/json': 'json',
  [SINGLE]: 'object',
  'application/vnd.pgrst.object': 'object',
  [CSV]: 'csv',
  'text/*': 'csv',
};

/**
 * The representation an Accept header asks for. `csv` is produced for reads only: a write's
 * returned rows are JSON (docs/decisions.md), so a write that accepts nothing else is refused.
 */
export function negotiate(accept: string | undefined, csvAllowed: boolean): Representation {
  if (!accept?.trim()) return 'json';
  const ranges = accept
    .split(',')
    .map((part, i) => {
      const [type = '', ...params] = part.split(';').map((p) => p.trim());
      const q = params.find((p) => /^q=/i.test(p));
      return { type: type.toLowerCase(), q: q ? Number(q.slice(2)) : 1, i };
    })
    .filter((r) => r.type && r.q > 0)
    // Highest quality first; equal ones keep the order they were sent in.
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { type } of ranges) {
    const made = PRODUCED[type];
    if (made && (made !== 'csv' || csvAllowed)) return made;
  }
  throw notAcceptable(accept);
}

import { invalidPreferences } from './errors.ts';

/**
 * The `Prefer` header, read once into a typed value (as PostgREST's Preferences.hs does).
 * postgrest-js joins several preferences with commas in one header: `return=representation,count=exact`.
 * Values this interface does not know are dropped unless `handling=strict`, which refuses them
 * (PGRST122), as PostgREST does. test/rest/stages.test.ts holds the examples.
 */
export type Prefer = {
  return: 'minimal' | 'headers-only' | 'representation';
  count: 'exact' | 'planned' | 'estimated' | null;
  resolution: 'merge-duplicates' | 'ignore-duplicates' | null;
  missing: 'default' | 'null';
};

/** The preferences honoured here, with the values understood. PostgREST's others (timezone, tx, max-affected, params) are not. */
const HONOURED = {
  handling: ['strict', 'lenient'],
  return: ['minimal', 'headers-only', 'representation'],
  count: ['exact', 'planned', 'estimated'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
} as const;

type Known = keyof typeof HONOURED;
const isKnown = (k: string): k is Known => Object.hasOwn(HONOURED, k);

/** What a request without `Prefer` gets (most requests): shared, never changed. */
const DEFAULTS: Prefer = Object.freeze({ return: 'minimal', count: null, resolution: null, missing: 'null' });

export function parsePrefer(header: string | undefined): Prefer {
  if (header === undefined) return DEFAULTS;
  const given = new Map<Known, string>();
  const invalid: string[] = [];
  for (const raw of header.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq).trim();
    const value = eq < 0 ? '' : part.slice(eq + 1).trim();
    if (isKnown(key) && (HONOURED[key] as readonly string[]).includes(value)) given.set(key, value);
    else invalid.push(part);
  }
  if (given.get('handling') === 'strict' && invalid.length) throw invalidPreferences(invalid);
  return {
    return: (given.get('return') as Prefer['return']) ?? DEFAULTS.return,
    count: (given.get('count') as Prefer['count']) ?? DEFAULTS.count,
    resolution: (given.get('resolution') as Prefer['resolution']) ?? DEFAULTS.resolution,
    missing: (given.get('missing') as Prefer['missing']) ?? DEFAULTS.missing,
  };
}

import { functionNotFound } from './errors.ts';

/** Query parameters PostgREST reads as shaping the result, never as a function's arguments. */
const NOT_ARGUMENTS = new Set([
  'select',
  'order',
  'limit',
  'offset',
  'columns',
  'or',
  'and',
  'not.or',
  'not.and',
]);

/** The argument names a call passes: the query's on GET, the JSON object's keys on POST. */
async function argumentNames(post: boolean, search: string, json: () => Promise<unknown>): Promise<string[]> {
  if (!post) {
    const keys = new URLSearchParams(search).keys();
    return [...new Set(keys)].filter((k) => !NOT_ARGUMENTS.has(k)).sort();
  }
  const body: unknown = await json().catch(() => null);
  return body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).sort() : [];
}

/**
 * /rest/v1/rpc/<name>: the interface exposes no function, so every call is PostgREST's
 * "function not in the schema cache" (PGRST202), worded as PostgREST words it, so a client
 * written against PostgREST recognises it.
 */
export async function rpc(
  name: string,
  method: string,
  search: string,
  json: () => Promise<unknown>,
): Promise<never> {
  const post = method === 'POST';
  const args = await argumentNames(post, search, json);
  const fn = `public.${name}`;
  const message = args.length
    ? `Could not find the function ${fn}(${args.join(', ')}) in the schema cache`
    : `Could not find the function ${fn} without parameters in the schema cache`;
  const searched = args.length ? ` with parameters ${args.join(', ')}` : ' without parameters';
  const details = `Searched for the function ${fn}${searched}${post ? ' or with a single unnamed json/jsonb parameter' : ''}, but no matches were found in the schema cache.`;
  throw functionNotFound(message, details);
}

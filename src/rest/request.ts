import type { Context } from 'hono';
import { claimedOrganization, type Principal } from '../platform/db/database.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../platform/http/json-depth.ts';
import { badBody } from './errors.ts';
import { parseRead, type ReadQuery } from './parse.ts';
import { type Prefer, parsePrefer } from './prefer.ts';

// The first stage: an HTTP request read once into a typed value. Only this module and
// respond.ts know Hono; the stages between them take and give plain data.

export const SINGLE = 'application/vnd.pgrst.object+json';

export type ApiRequest = {
  method: 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE';
  table: string;
  principal: Principal;
  /**
   * The organization the request acts in, from the token (null for anon, the service role, a
   * person without one, or a read that spans the caller's organizations: their memberships).
   */
  organization: string | null;
  /** The query string as sent (after `?`): what `query`, `columns` and `onConflict` were parsed from. */
  search: string;
  /** Shared by every request with the same query string (see parseQuery): never to be changed. */
  query: ReadQuery;
  /** `columns` and `on_conflict`, which only writes read. */
  columns: string | null;
  onConflict: string | null;
  prefer: Prefer;
  /** Accept: application/vnd.pgrst.object+json — one object, not an array. */
  single: boolean;
  range: string | undefined;
};

type ParsedQuery = Pick<ApiRequest, 'query' | 'columns' | 'onConflict'>;

/**
 * Parsed query strings, by their text: parsing is a pure function of it (names are checked
 * against the schema later, in plan.ts), and its result is never changed by the stages after it.
 * Only queries that parse are kept; at most PARSED_MAX, the oldest dropped first.
 */
const parsed = new Map<string, ParsedQuery>();
const PARSED_MAX = 500;

function parseQuery(url: string): { search: string; parsed: ParsedQuery } {
  const q = url.indexOf('?');
  const search = q < 0 ? '' : url.slice(q + 1);
  let hit = parsed.get(search);
  if (!hit) {
    const params = new URL(url).searchParams;
    hit = { query: parseRead(params), columns: params.get('columns'), onConflict: params.get('on_conflict') };
    if (parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value as string);
    parsed.set(search, hit);
  }
  return { search, parsed: hit };
}

export function apiRequest(c: Context, table: string, inOrganization: boolean): ApiRequest {
  const { search, parsed } = parseQuery(c.req.url);
  const principal = c.get('principal') as Principal;
  return {
    method: c.req.method as ApiRequest['method'],
    table,
    principal,
    organization: inOrganization ? claimedOrganization(principal) : null,
    search,
    ...parsed,
    prefer: parsePrefer(c.req.header('prefer')),
    single: c.req.header('accept')?.includes(SINGLE) ?? false,
    range: c.req.header('range'),
  };
}

/** A write's JSON body, refused before any SQL when it is not JSON or nests absurdly deep. */
export async function jsonBody(c: Context): Promise<unknown> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw badBody('The body is not valid JSON');
  }
  const deep = tooDeep(body);
  if (deep !== null) {
    throw badBody(`The body nests JSON more than ${MAX_JSON_DEPTH} levels deep (at ${deep || 'the top'})`);
  }
  return body;
}

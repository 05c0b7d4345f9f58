import type { IncomingHttpHeaders } from 'node:http';
import { claimedOrganization, type Principal } from '../platform/db/database.ts';
import { AppError } from '../platform/errors.ts';
import { MAX_JSON_DEPTH, tooDeep } from '../platform/http/json-depth.ts';
import { negotiate, type Representation } from './accept.ts';
import { badBody } from './errors.ts';
import { parseRead, type ReadQuery } from './parse.ts';
import { type Prefer, parsePrefer } from './prefer.ts';

// The first stage: an HTTP request read once into a typed value. Only this module, respond.ts
// and server.ts know HTTP; the stages between them take and give plain data.

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
  /** Accept: text/csv (reads only). */
  csv: boolean;
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

function parseQuery(search: string): ParsedQuery {
  let hit = parsed.get(search);
  if (!hit) {
    const params = new URLSearchParams(search);
    hit = { query: parseRead(params), columns: params.get('columns'), onConflict: params.get('on_conflict') };
    if (parsed.size >= PARSED_MAX) parsed.delete(parsed.keys().next().value as string);
    parsed.set(search, hit);
  }
  return hit;
}

/** What server.ts read off the HTTP request before this stage. */
export type HttpRequest = {
  method: ApiRequest['method'];
  /** The query string, after `?`. */
  search: string;
  headers: IncomingHttpHeaders;
  principal: Principal;
};

/**
 * The request as the stages read it. A read's query string is parsed when a stage first asks for
 * it: a read whose shape's statement is kept (read.ts) needs none of it, and with a spread of ids
 * each string is new, so parsing it built objects that the cache above then kept until 500 others
 * pushed them out, long enough to reach the old generation (docs/performance.md, "REST CPU per
 * request"). A write parses at once. A class rather than an object literal with getters: V8 makes
 * a literal's accessors anew for every request, a class's once (the same doc).
 */
class RestRequest implements ApiRequest {
  readonly organization: string | null;
  readonly single: boolean;
  readonly csv: boolean;
  readonly range: string | undefined;

  constructor(
    readonly method: ApiRequest['method'],
    readonly table: string,
    readonly principal: Principal,
    readonly search: string,
    readonly prefer: Prefer,
    representation: Representation,
    headers: IncomingHttpHeaders,
    inOrganization: boolean,
    private parsed: ParsedQuery | undefined,
  ) {
    this.organization = inOrganization ? claimedOrganization(principal) : null;
    this.single = representation === 'object';
    this.csv = representation === 'csv';
    this.range = headers.range;
  }

  parse(): ParsedQuery {
    this.parsed ??= parseQuery(this.search);
    return this.parsed;
  }
  get query() {
    return this.parse().query;
  }
  get columns() {
    return this.parse().columns;
  }
  get onConflict() {
    return this.parse().onConflict;
  }
}

export function apiRequest(http: HttpRequest, table: string, inOrganization: boolean): ApiRequest {
  const { method, search, headers, principal } = http;
  const read = method === 'GET' || method === 'HEAD';
  const parsed = read ? undefined : parseQuery(search);
  let prefer: Prefer;
  let answer: Representation;
  try {
    // Node joins a header sent twice with ", ", as a Headers object does (not set-cookie).
    prefer = parsePrefer(headers.prefer as string | undefined);
    answer = negotiate(headers.accept, read);
  } catch (err) {
    parseQuery(search); // a query string that does not parse is refused first, as it always was
    throw err;
  }
  return new RestRequest(method, table, principal, search, prefer, answer, headers, inOrganization, parsed);
}

/** A write's JSON body, refused before any SQL when it is not JSON or nests absurdly deep. */
export async function jsonBody(json: () => Promise<unknown>): Promise<unknown> {
  let body: unknown;
  try {
    body = await json();
  } catch (err) {
    if (err instanceof AppError) throw err; // too large: refused as such
    throw badBody('The body is not valid JSON');
  }
  const deep = tooDeep(body);
  if (deep !== null) {
    throw badBody(`The body nests JSON more than ${MAX_JSON_DEPTH} levels deep (at ${deep || 'the top'})`);
  }
  return body;
}

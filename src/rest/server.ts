import type { IncomingMessage, ServerResponse } from 'node:http';
import { ACCOUNT_TABLES } from '../domain/account-state.ts';
import { AppError, errorBody } from '../platform/errors.ts';
import { callerOf, knownCaller } from '../platform/http/authenticate.ts';
import { JsonBody, refuseDeclaredTooLarge } from '../platform/http/body.ts';
import { PUBLIC_CORS_HEADERS } from '../platform/http/cors.ts';
import { isManyRows, meterRequest } from '../platform/http/meter.ts';
import { requestIdOf } from '../platform/http/request-context.ts';
import { assertOrganization } from '../platform/http/require-organization.ts';
import { accessLog, failedRequest, type Logger } from '../platform/log.ts';
import { OTHER, UNMATCHED } from '../platform/metrics/route-labels.ts';
import type { Services } from '../services.ts';
import { restOpenApi } from './openapi.ts';
import { parsePrefer } from './prefer.ts';
import { read } from './read.ts';
import { type ApiRequest, apiRequest, type HttpRequest, jsonBody } from './request.ts';
import { type HttpAnswer, type RestResponse, render, restError } from './respond.ts';
import { rpc } from './rpc.ts';
import { insert, remove, update } from './write.ts';

/**
 * /rest/v1 as a plain Node request handler, outside the Hono app that serves every other surface
 * (app.ts sends it every /rest/v1 request but CORS preflights). It is the surface agents and
 * supabase-js call most, and on a cached read the app's middleware chain cost about as much CPU
 * as all the rest of the service's work together (docs/performance.md). It does what that chain
 * does, in the same order and with the same functions: request id, CORS headers and access line
 * (request-context.ts, cors.ts, log.ts); body limit (body.ts); API key, bearer token and metering
 * (authenticate.ts, meter.ts); then the REST stages (request.ts → read.ts/write.ts → respond.ts),
 * and errors in the one error body, a 5xx logged with its cause.
 */
export function restHandler(s: Services): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const access = accessLog(s.log);
  return async (req, res) => {
    const started = performance.now();
    const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    const route = routeOf(method, path);
    let a: HttpAnswer;
    try {
      a = await answer(s, req, res, method, path, route, q < 0 ? '' : url.slice(q + 1));
    } catch (err) {
      a = failure(err, () => s.log.child({ req_id: requestId }));
    }
    a.headers['x-request-id'] = requestId;
    Object.assign(a.headers, PUBLIC_CORS_HEADERS);
    if (a.body !== null) a.headers['content-length'] = String(Buffer.byteLength(a.body));
    res.writeHead(a.status, a.headers);
    res.end(a.body ?? undefined);
    access(requestId, method, path, a.status, started);
    observe(s, route, method, a.status, started);
  };
}

type Route =
  | { kind: 'table'; name: string }
  | { kind: 'rpc'; name: string }
  | { kind: 'describe' }
  | { kind: 'slash' }
  | { kind: 'none' };

const TABLE_METHODS = new Set(['GET', 'HEAD', 'POST', 'PATCH', 'DELETE']);
const READ_METHODS = new Set(['GET', 'HEAD']);
const RPC_METHODS = new Set(['GET', 'HEAD', 'POST']);

/** The routes the Hono app had under /rest/v1: `/`, `/rpc/:name` before `/:table`. */
function routeOf(method: string, path: string): Route {
  const rest = path.slice('/rest/v1'.length);
  if (rest === '') return READ_METHODS.has(method) ? { kind: 'describe' } : { kind: 'none' };
  if (rest === '/') return READ_METHODS.has(method) ? { kind: 'slash' } : { kind: 'none' };
  const slash = rest.indexOf('/', 1);
  if (slash < 0)
    return TABLE_METHODS.has(method) ? { kind: 'table', name: decoded(rest.slice(1)) } : { kind: 'none' };
  const name = rest.slice(slash + 1);
  if (
    slash === 4 &&
    rest.startsWith('/rpc') &&
    name !== '' &&
    !name.includes('/') &&
    RPC_METHODS.has(method)
  ) {
    return { kind: 'rpc', name: decoded(name) };
  }
  return { kind: 'none' };
}

/**
 * The request's duration by route template (src/platform/metrics/request-durations.ts): a table
 * by its name only when the schema cache has it, any other name as `other`; nothing allocated.
 */
function observe(s: Services, route: Route, method: string, status: number, started: number): void {
  const durations = s.metrics.requests;
  if (route.kind === 'table')
    durations.observe(TABLE_ROUTE, s.schema.has(route.name) ? route.name : OTHER, method, status, started);
  else if (route.kind === 'rpc') durations.observe(RPC_ROUTE, OTHER, method, status, started);
  else if (route.kind === 'none') durations.observe(UNMATCHED, '', method, status, started);
  else durations.observe('/rest/v1', '', method, status, started);
}

const TABLE_ROUTE = '/rest/v1/:table';
const RPC_ROUTE = '/rest/v1/rpc/:name';

/** A path segment decoded as the app's router decoded parameters (left as sent when malformed). */
const decoded = (segment: string) => {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

async function answer(
  s: Services,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  path: string,
  route: Route,
  search: string,
): Promise<HttpAnswer> {
  const write = !READ_METHODS.has(method);
  if (write) refuseDeclaredTooLarge(req, res, s.config.bodyLimitBytes);
  const apikey = req.headers.apikey as string | undefined;
  const principal =
    knownCaller(s.tokens, apikey, req.headers.authorization) ??
    (await callerOf(s, apikey, req.headers.authorization));
  const body = write ? new JsonBody(req, res, s.config.bodyLimitBytes) : null;
  // A JSON array of several rows counts as a bulk operation too (meter.ts).
  const metering = meterRequest(
    s,
    principal,
    body && req.headers['content-type']?.includes('application/json')
      ? () => body.json().then(isManyRows, () => false)
      : null,
    !write && route.kind === 'table' && ACCOUNT_TABLES.has(route.name) ? 'count' : 'refuse',
  );
  if (metering) await metering;
  // Right after a start, the schema cache may still be on its way (main.ts).
  const schemaPending = s.schemaPending?.();
  if (schemaPending) await schemaPending;
  if (route.kind === 'none') throw new AppError(404, 'not_found', `No route for ${method} ${path}`);
  if (route.kind === 'slash') return { status: 308, headers: { location: '/rest/v1' }, body: null };
  if (route.kind === 'describe') {
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(restOpenApi(s.schema, s.publicUrl)),
    };
  }
  try {
    if (route.kind === 'rpc') {
      parsePrefer(req.headers.prefer as string | undefined);
      return await rpc(route.name, method, search, () => (body as JsonBody).json());
    }
    const http: HttpRequest = {
      method: method as ApiRequest['method'],
      search,
      headers: req.headers,
      principal,
    };
    return render(
      await table(s, route.name, http, () => jsonBody(() => (body as JsonBody).json())),
      method === 'HEAD',
    );
  } catch (err) {
    throw Object.assign(restError(err, principal.kind === 'anon'), { cause: err });
  }
}

/**
 * Tenant tables carry organization_id and show only the current organization's rows; plans and
 * organizations do not, and a person reads their own memberships in every organization (which
 * is how one without a current organization finds one to switch to).
 */
function actsInOrganization(s: Services, method: string, table: string): boolean {
  if (table === 'organization_members' && READ_METHODS.has(method)) return false;
  return s.schema.get(table)?.columns.has('organization_id') === true;
}

function table(
  s: Services,
  name: string,
  http: HttpRequest,
  body: () => Promise<unknown>,
): Promise<RestResponse> {
  const acts = actsInOrganization(s, http.method, name);
  if (acts) assertOrganization(http.principal);
  const req = apiRequest(http, name, acts);
  if (req.method === 'POST') return insert(s, req, body);
  if (req.method === 'PATCH') return update(s, req, body);
  if (req.method === 'DELETE') return remove(s, req);
  return read(s, req);
}

/** The one error body (as app.ts renders it for every other surface); a 5xx logged by its cause. */
function failure(err: unknown, log: () => Logger): HttpAnswer {
  const e = failedRequest(err, log);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(e.headers)) headers[k.toLowerCase()] = v;
  return { status: e.status, headers, body: JSON.stringify(errorBody(e)) };
}

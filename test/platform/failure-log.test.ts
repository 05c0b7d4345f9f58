// When the service fails (here: a fault in its own code under every database call), every surface
// answers 500 without the cause, and the log says the cause exactly once, on a line carrying the
// request's id, so an operator can get from a client's X-Request-Id to why it failed. (A database
// out of reach is not such a failure: 503, test/platform/database-outage.test.ts.)
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, rpcPost, setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
/** An agent whose key check and plan the service has cached, so its calls reach the tools. */
let warm: string;
/** An agent the service has never seen: its key check needs the database. */
let cold: string;
let restore: Record<string, unknown> | undefined;
const FAULT = "Cannot read properties of undefined (reading 'rows')";

beforeAll(async () => {
  svc = await startTestService();
  owner = await signUp(svc, 'Failing Ltd');
  await setPlan(svc, owner, 'starter');
  warm = (await agentToken(svc, owner, ['read'])).token;
  cold = (await agentToken(svc, owner, ['read'])).token;
  const listed = await rpcPost(svc, warm, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  expect(listed.status).toBe(200);
  // Every database call fails as a bug in the code around it would (a result read wrongly).
  const db = svc.services.db;
  restore = {
    query: db.query,
    transaction: db.transaction,
    asPrincipal: db.asPrincipal,
    queryAs: db.queryAs,
  };
  const broken = async () => {
    throw new TypeError(FAULT);
  };
  Object.assign(db, { query: broken, transaction: broken, asPrincipal: broken, queryAs: broken });
});
afterAll(async () => {
  if (restore) Object.assign(svc.services.db, restore);
  await svc?.stop();
});

type Line = { level: number; req_id?: string; msg: string; err?: Record<string, unknown> } & Record<
  string,
  unknown
>;
const linesOf = (requestId: string): Line[] =>
  (svc.logLines() as Line[]).filter((l) => l.req_id === requestId);

/** The one error line of the request: the driver's own words for what went wrong. */
function causeLogged(requestId: string): Line {
  const errors = linesOf(requestId).filter((l) => l.level >= 50);
  expect(errors).toHaveLength(1);
  const [line] = errors as [Line];
  expect(line.err).toMatchObject({ name: expect.any(String), stack: expect.any(String) });
  expect(line.err).toMatchObject({ name: 'TypeError', message: FAULT });
  expect(JSON.stringify(line)).not.toContain(owner.access_token);
  return line;
}

let n = 0;
const idFor = (surface: string) => `failure-${surface}-${process.pid}-${++n}`;

describe('a 5xx is logged once, with the request id and its cause', () => {
  it('on /health, which answers 503', async () => {
    const id = idFor('health');
    const r = await call(svc, 'GET', '/health', { headers: { 'x-request-id': id } });
    expect(r.status).toBe(503);
    expect(r.json).toMatchObject({ error: 'service_unavailable' });
    causeLogged(id);
  });

  it('on /rest/v1, read with @supabase/postgrest-js', async () => {
    const id = idFor('rest');
    const rest = new PostgrestClient(`${svc.url}/rest/v1`, {
      headers: { apikey: svc.anonKey, Authorization: `Bearer ${owner.access_token}`, 'x-request-id': id },
    });
    const { status, error } = await rest.from('contacts').select('id');
    expect(status).toBe(500);
    expect(error).toMatchObject({ code: 'internal_error', message: 'Something went wrong on our side' });
    causeLogged(id);
    expect(linesOf(id).find((l) => l.msg === 'request')).toMatchObject({ status: 500 });
  });

  it('on /rest/v1 with the service role key', async () => {
    const id = idFor('rest-service');
    const r = await call(svc, 'GET', '/rest/v1/contacts?select=id', {
      token: svc.serviceRoleKey,
      headers: { apikey: svc.serviceRoleKey, 'x-request-id': id },
    });
    expect(r.status).toBe(500);
    causeLogged(id);
  });

  it('on /auth/v1', async () => {
    const id = idFor('auth');
    const r = await call(svc, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email: owner.user.email, password: 'password-8' },
      headers: { 'x-request-id': id },
    });
    expect(r.status).toBe(500);
    expect(JSON.stringify(r.json)).not.toContain('reading');
    causeLogged(id);
  });

  it('on /functions/v1', async () => {
    const id = idFor('functions');
    const r = await call(svc, 'GET', '/functions/v1/agent-api-keys', {
      token: owner.access_token,
      headers: { 'x-request-id': id },
    });
    expect(r.status).toBe(500);
    causeLogged(id);
  });

  it('on the MCP endpoint, when the agent’s key cannot be checked', async () => {
    const id = idFor('mcp');
    const r = await rpcPost(
      svc,
      cold,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { 'x-request-id': id },
    );
    expect(r.status).toBe(500);
    expect(await r.json()).toMatchObject({ error: 'internal_error' });
    causeLogged(id);
  });

  it('in a tool call, answered as a tool result', async () => {
    const id = idFor('tool');
    const r = await rpcPost(
      svc,
      warm,
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_list_contacts', arguments: {} } },
      { 'x-request-id': id },
    );
    expect(r.status).toBe(200);
    const body = (await r.json()) as { result: { isError: boolean; structuredContent: unknown } };
    expect(body.result).toMatchObject({ isError: true, structuredContent: { error: 'internal_error' } });
    expect(causeLogged(id)).toMatchObject({ tool: 'svc_list_contacts' });
  });

  it('in a resource read, answered as a JSON-RPC error that does not quote the cause', async () => {
    const id = idFor('resource');
    const r = await rpcPost(
      svc,
      warm,
      { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'svc://organization/info' } },
      { 'x-request-id': id },
    );
    const body = (await r.json()) as { error: { code: number; message: string } };
    expect(body.error).toEqual({ code: -32603, message: 'Something went wrong on our side' });
    expect(causeLogged(id)).toMatchObject({ resource: 'svc://organization/info' });
  });
});

// A lone tools/call is answered without the SDK's transport and server (src/mcp/direct.ts). What
// this file protects: for every call the direct path takes, its answer is the SDK's, byte for byte
// (both paths run in this process on the same call), and every message it must not take (batches,
// unknown tools, keys the SDK reads or refuses, headers its transport refuses) is left to the SDK.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerDirect, directCall, type TransportHeaders } from '../../src/mcp/direct.ts';
import { BY_NAME, handleMcp } from '../../src/mcp/server.ts';
import type { ToolContext } from '../../src/mcp/tool.ts';
import { serviceUnavailable } from '../../src/platform/errors.ts';
import { principalFromClaims, verifyBearer } from '../../src/platform/http/authenticate.ts';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, rpcPost, setPlan } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
let owner: Session;
let reader: ToolContext;
let token: string;
let contactId: string;

const HEADERS: TransportHeaders = {
  accept: 'application/json, text/event-stream',
  contentType: 'application/json',
  protocolVersion: null,
};

async function contextOf(t: string): Promise<ToolContext> {
  const principal = principalFromClaims(await verifyBearer(svc.services.tokens, t));
  return { s: svc.services, principal: principal as ToolContext['principal'], log: svc.services.log };
}

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  owner = await signUp(svc, 'Direct Calls Ltd');
  await setPlan(svc, owner, 'starter');
  // Text that JSON escapes: quotes, a backslash, a newline, U+2028, an emoji, a non-Latin name.
  const c = await call(svc, 'POST', '/rest/v1/contacts', {
    token: owner.access_token,
    body: {
      first_name: 'Zoë "Z" \\ O\'Neil',
      last_name: 'line\nbreak\u2028 😀 Łódź',
      email: 'zoe@example.test',
    },
    headers: { prefer: 'return=representation' },
  });
  expect(c.status).toBe(201);
  contactId = c.json[0].id;
  const o = await call(svc, 'POST', '/rest/v1/orders', {
    token: owner.access_token,
    body: { contact_id: contactId, customer_name: 'Zoë' },
  });
  expect(o.status).toBe(201);
  token = (await agentToken(svc, owner, ['read'])).token;
  reader = await contextOf(token);
});
afterAll(() => svc?.stop());

/** The SDK's answer (transport and shared server) to one message, as text, with its status. */
async function viaSdk(body: unknown, ctx: ToolContext, h = HEADERS) {
  const headers: Record<string, string> = { accept: h.accept ?? '', 'content-type': h.contentType ?? '' };
  if (h.protocolVersion) headers['mcp-protocol-version'] = h.protocolVersion;
  const request = new Request('http://localhost/functions/v1/mcp-server', { method: 'POST', headers });
  const res = await handleMcp(request, body, ctx);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

const toolCall = (name: string, args?: unknown, id: unknown = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: args === undefined ? { name } : { name, arguments: args },
});

describe('tools/call answered directly', () => {
  it('answers every call it takes exactly as the SDK does: results, refusals, ids of both kinds', async () => {
    const messages = [
      toolCall('svc_get_contact', { contact_id: contactId }),
      toolCall('svc_get_contact', { contact_id: contactId }, 'a-string-id'),
      toolCall('svc_get_contact', { contact_id: contactId }, 0),
      toolCall('svc_get_contact', { contact_id: '00000000-0000-4000-8000-000000000000' }, 2),
      toolCall('svc_get_contact', { contact_id: 'not-a-uuid', extra: true }, 3),
      toolCall('svc_list_orders', {}, 4),
      toolCall('svc_list_orders', undefined, 5),
      toolCall('svc_list_contacts', { name: 'Zo', limit: 1 }, 6),
      toolCall('svc_search', { query: 'zoe' }, 7),
      toolCall('svc_search', { query: '' }, 8),
      toolCall('svc_create_contact', { first_name: 'Read-only' }, 9),
    ];
    for (const m of messages) {
      const direct = directCall(HEADERS, m, BY_NAME);
      expect(direct, JSON.stringify(m)).toBeDefined();
      const sdk = await viaSdk(m, reader);
      expect(sdk).toMatchObject({ status: 200, type: 'application/json' });
      expect(await answerDirect(direct as NonNullable<typeof direct>, reader)).toBe(sdk.text);
    }
    // The refusals above are refusals indeed (not one answer compared with itself).
    const refused = JSON.parse((await viaSdk(messages[10], reader)).text);
    expect(refused.result).toMatchObject({
      isError: true,
      structuredContent: { error: 'insufficient_scope' },
    });
  });

  it('answers a call the database cannot serve as the SDK does, and marks the request unavailable', async () => {
    const down = async () => {
      throw serviceUnavailable();
    };
    const db = Object.assign(Object.create(svc.services.db), { queryAs: down, asPrincipal: down });
    const ctx = () => ({ ...reader, s: { ...svc.services, db } });
    const m = toolCall('svc_get_contact', { contact_id: contactId }, 11);
    const sdkCtx = ctx();
    const sdk = await viaSdk(m, sdkCtx);
    const directCtx = ctx();
    const direct = directCall(HEADERS, m, BY_NAME);
    expect(await answerDirect(direct as NonNullable<typeof direct>, directCtx)).toBe(sdk.text);
    expect(JSON.parse(sdk.text).error).toMatchObject({
      code: -32603,
      data: { error: 'service_unavailable' },
    });
    expect(directCtx.unavailable?.code).toBe('service_unavailable');
    expect(sdkCtx.unavailable?.code).toBe('service_unavailable');
  });

  it('leaves to the SDK every message and header it does not answer exactly so', () => {
    const call = toolCall('svc_list_orders', {});
    const leftAlone: [TransportHeaders, unknown][] = [
      [HEADERS, [call]],
      [HEADERS, toolCall('svc_drop_tables', {})],
      [HEADERS, { ...call, method: 'tools/list' }],
      [HEADERS, { ...call, extra: 1 }],
      [HEADERS, { ...call, jsonrpc: '1.0' }],
      [HEADERS, { ...call, id: 1.5 }],
      [HEADERS, { ...call, id: null }],
      [HEADERS, { ...call, id: 2 ** 60 }],
      [HEADERS, { jsonrpc: '2.0', method: 'tools/call', params: call.params }],
      [HEADERS, toolCall('svc_list_orders', [])],
      [HEADERS, toolCall('svc_list_orders', null)],
      [HEADERS, toolCall('svc_list_orders', JSON.parse('{"__proto__": {"limit": 1}}'))],
      [HEADERS, { ...call, params: { ...call.params, _meta: { progressToken: 1 } } }],
      [HEADERS, { ...call, params: { ...call.params, task: { ttl: 1000 } } }],
      [HEADERS, { ...call, params: { name: 7 } }],
      [HEADERS, { ...call, params: undefined }],
      [{ ...HEADERS, accept: 'application/json' }, call],
      [{ ...HEADERS, accept: null }, call],
      [{ ...HEADERS, contentType: 'text/plain; a=application/json' }, call],
      [{ ...HEADERS, contentType: null }, call],
      [{ ...HEADERS, protocolVersion: '1999-01-01' }, call],
    ];
    for (const [h, m] of leftAlone) expect(directCall(h, m, BY_NAME), JSON.stringify([h, m])).toBeUndefined();
    // What it takes: parameters in the content type, a known protocol version, no arguments.
    const taken: [TransportHeaders, unknown][] = [
      [{ ...HEADERS, contentType: 'application/json; charset=utf-8' }, call],
      [{ ...HEADERS, protocolVersion: '2025-06-18' }, call],
      [HEADERS, toolCall('svc_list_orders')],
    ];
    for (const [h, m] of taken) expect(directCall(h, m, BY_NAME), JSON.stringify([h, m])).toBeDefined();
  });

  it('answers over HTTP with the SDK transport’s status and headers', async () => {
    const res = await rpcPost(svc, token, toolCall('svc_get_contact', { contact_id: contactId }, 'h'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const text = await res.text();
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    const sdk = await viaSdk(toolCall('svc_get_contact', { contact_id: contactId }, 'h'), reader);
    expect(text).toBe(sdk.text);
  });
});

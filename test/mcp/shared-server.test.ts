import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Session, signUp } from '../helpers/http.ts';
import { agentToken, rpcPost } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// One MCP server object serves every HTTP request of the process (src/mcp/server.ts); each
// request's JSON-RPC ids are the client's own, and stateless clients all start from the same
// numbers. Two tenants' agents calling at once with the same ids must each get their own answers.

let svc: TestService;
const tenants: { owner: Session; token: string; email: string }[] = [];

beforeAll(async () => {
  svc = await startTestService({ RATE_LIMIT_STANDARD_PER_MINUTE: '10000' });
  for (const name of ['Alpha', 'Beta']) {
    const owner = await signUp(svc, `${name} Shared Ltd`);
    const email = `only-${name.toLowerCase()}@example.test`;
    const r = await call(svc, 'POST', '/rest/v1/contacts', {
      token: owner.access_token,
      body: { first_name: name, email },
    });
    expect(r.status).toBe(201);
    tenants.push({ owner, token: (await agentToken(svc, owner, ['read'])).token, email });
  }
});
afterAll(() => svc?.stop());

const list = (id: number | string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'svc_list_contacts', arguments: {} },
});

const emailsIn = (answer: { result: { structuredContent: { contacts: { email: string }[] } } }) =>
  answer.result.structuredContent.contacts.map((c) => c.email);

describe('one MCP server for every request', () => {
  it('answers concurrent calls of two tenants with the same ids each with its own rows and id', async () => {
    const calls = Array.from({ length: 40 }, (_, i) => {
      const t = tenants[i % 2] as (typeof tenants)[number];
      // Half single messages with id 1, half batches with ids 1 and "1" (distinct in JSON-RPC).
      const body = i % 4 < 2 ? list(1) : [list(1), list('1')];
      return rpcPost(svc, t.token, body).then(async (res) => ({ t, res, json: await res.json() }));
    });
    for (const { t, res, json } of await Promise.all(calls)) {
      expect(res.status).toBe(200);
      const answers = Array.isArray(json) ? json : [json];
      expect(answers.map((a) => a.id)).toEqual(Array.isArray(json) ? [1, '1'] : [1]);
      for (const a of answers) expect(emailsIn(a)).toEqual([t.email]);
    }
  });

  it('lets no notification a client sends reach another request: answered 202, nothing cancelled', async () => {
    const [a, b] = tenants as [(typeof tenants)[number], (typeof tenants)[number]];
    const pending = Array.from({ length: 10 }, () => rpcPost(svc, a.token, list(7)));
    const cancels = Array.from({ length: 10 }, () =>
      rpcPost(svc, b.token, {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 7, reason: 'not yours' },
      }),
    );
    for (const res of await Promise.all(cancels)) expect(res.status).toBe(202);
    for (const res of await Promise.all(pending)) {
      expect(res.status).toBe(200);
      const json = await res.json();
      expect(json.id).toBe(7);
      expect(emailsIn(json)).toEqual([a.email]);
    }
  });
});

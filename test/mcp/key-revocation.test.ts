// A revoked agent key stops working everywhere within seconds, not only where it was revoked: the
// MCP endpoint of every process refuses its live tokens (401) at the next request, tools/list
// included, which needs no database statement that would notice by itself. On PostgreSQL two
// service processes share one database (revoked through one, refused by the other); PGlite is
// one process, so the same service plays both parts there.
import { generateKeyPairSync } from 'node:crypto';
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres, openTestPostgres } from '../helpers/db.ts';
import { type Session, signUp } from '../helpers/http.ts';
import { agentToken, mcpClient, rpcPost } from '../helpers/mcp.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

// Both processes sign with one key, as the replicas of one deployment do.
const JWT_PRIVATE_KEY = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

// `revoker` remembers a key check for 60 s, so only the revocation's notice can make it refuse in
// time; `other` (PostgreSQL only) for 1 s, the backstop when a notice is lost.
let revoker: TestService;
let other: TestService;
beforeAll(async () => {
  revoker = await startTestService({ JWT_PRIVATE_KEY, AGENT_KEY_RECHECK_SECONDS: '60' });
  other = onPostgres()
    ? await startTestService(
        { JWT_PRIVATE_KEY, AGENT_KEY_RECHECK_SECONDS: '1' },
        { databaseUrl: revoker.databaseUrl },
      )
    : revoker;
}, 60_000);
afterAll(async () => {
  if (other !== revoker) await other?.stop();
  await revoker?.stop();
});

const listTools = (svc: TestService, token: string) =>
  rpcPost(svc, token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
const callTool = (svc: TestService, token: string) =>
  rpcPost(svc, token, {
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'svc_list_contacts', arguments: {} },
  });

const rest = (svc: TestService, who: Session) =>
  new PostgrestClient(`${svc.url}/rest/v1`, {
    headers: { apikey: svc.anonKey, Authorization: `Bearer ${who.access_token}` },
  });

/** Asks until `svc` refuses the token, for at most `withinMs`; how long it took. */
async function refusedWithin(svc: TestService, token: string, withinMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const res = await listTools(svc, token);
    if (res.status === 401) return Date.now() - started;
    expect(res.status).toBe(200);
    if (Date.now() - started > withinMs) throw new Error(`still answering after ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An organization with a live read key whose token the other process has already accepted. */
async function liveAgent(name: string) {
  const owner = await signUp(revoker, name);
  const agent = await agentToken(revoker, owner, ['read']);
  const client = await mcpClient(other, agent.token);
  expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  await client.close();
  return { owner, agent };
}

describe('revoking an agent key', () => {
  it("is felt by every process's MCP endpoint within 5 s: tools/list and tool calls answer 401", async () => {
    const { owner, agent } = await liveAgent('Revoked Everywhere');
    // Another organization's owner cannot revoke it: nothing changes, the agent keeps working.
    const stranger = await signUp(revoker, 'Not Yours');
    const meddle = await rest(revoker, stranger)
      .from('agent_api_keys')
      .update({ is_active: false })
      .eq('key_prefix', agent.keyPrefix)
      .select('id');
    expect(meddle.data).toEqual([]);
    expect((await listTools(other, agent.token)).status).toBe(200);

    const revoked = await rest(revoker, owner)
      .from('agent_api_keys')
      .update({ is_active: false })
      .eq('key_prefix', agent.keyPrefix)
      .select('is_active');
    expect(revoked.data).toEqual([{ is_active: false }]);

    expect(await refusedWithin(other, agent.token, 5000)).toBeLessThan(5000);
    const call = await callTool(other, agent.token);
    expect(call.status).toBe(401);
    const body = await call.json();
    expect(body).toMatchObject({ error: 'unauthorized', message: expect.stringMatching(/revoked/) });
    expect(call.headers.get('www-authenticate')).toMatch(/^Bearer /);
    // The process it was revoked through refuses it too.
    expect((await listTools(revoker, agent.token)).status).toBe(401);
  });

  it.runIf(onPostgres())(
    'is felt within AGENT_KEY_RECHECK_SECONDS even when the notice never arrives',
    async () => {
      const { agent } = await liveAgent('Silent Revocation');
      // Revoked with the triggers off (session_replication_role = replica): no notice is sent.
      const db = openTestPostgres(revoker.databaseUrl as string, 1);
      try {
        await db.transaction(async (tx) => {
          await tx.query('set local session_replication_role = replica');
          await tx.query('update public.agent_api_keys set is_active = false where key_prefix = $1', [
            agent.keyPrefix,
          ]);
        });
      } finally {
        await db.close();
      }
      expect(await refusedWithin(other, agent.token, 3000)).toBeLessThan(3000);
      expect((await callTool(other, agent.token)).status).toBe(401);
    },
  );
});

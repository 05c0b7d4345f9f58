// What a tool call costs: `tools/call svc_get_contact` on the MCP server (POST
// /functions/v1/mcp-server) against `GET /rest/v1/contacts?id=eq.…` for the same row, with the
// same agent token, in the same run. Both go over real HTTP with plain fetch (keep-alive), one
// request at a time, alternating between the two. Prints p50/p99/mean of each, the ratio MCP/REST
// (goal ≤ 1.5) and the size of the tools/list answer. Never fails on a figure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/main.ts';
import { SERVICE } from '../src/platform/db/database.ts';
import { withScratchDatabase } from './scratch-database.ts';

const WARM_UP = 200;
const ROUNDS = 2000;

type Stats = { p50: number; p99: number; mean: number };

function stats(latencies: number[]): Stats {
  const t = [...latencies].sort((a, b) => a - b);
  return {
    p50: t[Math.floor(t.length / 2)] ?? 0,
    p99: t[Math.floor(t.length * 0.99)] ?? 0,
    mean: t.reduce((a, b) => a + b, 0) / (t.length || 1),
  };
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: the bench reads whatever JSON came back
  const json: any = text ? JSON.parse(text) : null;
  return { status: res.status, json };
}

async function bench(engine: string, env: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-mcp-'));
  const svc = await startService(
    loadConfig({
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATA_DIR: dir,
      RATE_LIMIT_STANDARD_PER_MINUTE: '1000000',
      ...env,
    }),
  );
  const s = svc.services;
  const anon = { apikey: s.keys.anonKey };
  try {
    // An organization on the scale plan (100,000 calls a day), the way an operator moves it.
    const signup = await postJson(
      `${svc.url}/auth/v1/signup`,
      {
        email: `bench-${Date.now()}@example.test`,
        password: 'password-8',
        data: { organization_name: 'Bench' },
      },
      anon,
    );
    if (signup.status !== 200) throw new Error(`signup: ${signup.status} ${JSON.stringify(signup.json)}`);
    const session = signup.json as { access_token: string };
    const claims = await s.tokens.verify(session.access_token);
    const org = (claims.app_metadata as { organization_id: string }).organization_id;
    const plan = await postJson(
      `${svc.url}/functions/v1/organization-plan`,
      { organization_id: org, plan: 'scale' },
      { ...anon, authorization: `Bearer ${s.keys.serviceRoleKey}` },
    );
    if (plan.status !== 200) throw new Error(`plan change: ${plan.status} ${JSON.stringify(plan.json)}`);

    // An agent token: a key with the write scope, exchanged at agent-auth.
    const key = await postJson(
      `${svc.url}/functions/v1/agent-api-key-create`,
      { name: 'bench agent', scopes: ['write'] },
      { ...anon, authorization: `Bearer ${session.access_token}` },
    );
    if (key.status !== 201) throw new Error(`key creation: ${key.status} ${JSON.stringify(key.json)}`);
    const auth = await postJson(`${svc.url}/functions/v1/agent-auth`, { api_key: key.json.api_key }, anon);
    if (auth.status !== 200) throw new Error(`agent-auth: ${auth.status} ${JSON.stringify(auth.json)}`);
    const token = auth.json.access_token as string;

    await s.db.asPrincipal(SERVICE, (tx) =>
      tx.query(
        `insert into contacts (organization_id, first_name, email, company)
         select $1, 'c' || g, 'c' || g || '@ex.test', 'Acme' from generate_series(1, 1000) g`,
        [org],
      ),
    );
    await s.db.query('analyze contacts');
    const [one] = await s.db.query<{ id: string }>(
      'select id from contacts where organization_id = $1 limit 1',
      [org],
    );
    const contactId = one?.id as string;

    const mcpUrl = `${svc.url}/functions/v1/mcp-server`;
    const mcpHeaders = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    };
    const restUrl = `${svc.url}/rest/v1/contacts?id=eq.${contactId}`;
    const restHeaders = { ...anon, authorization: `Bearer ${token}` };

    let rpcId = 0;
    const mcpCall = async () => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: ++rpcId,
        method: 'tools/call',
        params: { name: 'svc_get_contact', arguments: { contact_id: contactId } },
      });
      const t = performance.now();
      const res = await fetch(mcpUrl, { method: 'POST', headers: mcpHeaders, body });
      const text = await res.text();
      const ms = performance.now() - t;
      const result = res.status === 200 ? JSON.parse(text).result : undefined;
      if (result?.isError || result?.structuredContent?.contact?.id !== contactId) {
        throw new Error(`tools/call: ${res.status} ${text.slice(0, 500)}`);
      }
      return ms;
    };
    const restRead = async () => {
      const t = performance.now();
      const res = await fetch(restUrl, { headers: restHeaders });
      const text = await res.text();
      const ms = performance.now() - t;
      const rows = res.status === 200 ? JSON.parse(text) : undefined;
      if (!Array.isArray(rows) || rows.length !== 1 || rows[0]?.id !== contactId) {
        throw new Error(`rest: ${res.status} ${text.slice(0, 500)}`);
      }
      return ms;
    };

    // tools/list, as a client receives it (no initialize: the server is stateless).
    const listRes = await fetch(mcpUrl, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/list', params: {} }),
    });
    const listBytes = Buffer.from(await listRes.arrayBuffer());
    const tools = JSON.parse(listBytes.toString('utf8')).result?.tools as unknown[] | undefined;
    if (listRes.status !== 200 || !tools) throw new Error(`tools/list: ${listRes.status}`);
    const gzipped = gzipSync(listBytes).length;

    for (let i = 0; i < WARM_UP; i++) {
      await mcpCall();
      await restRead();
    }
    const mcp: number[] = [];
    const rest: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate which goes first, so neither always follows the other.
      if (i % 2 === 0) {
        mcp.push(await mcpCall());
        rest.push(await restRead());
      } else {
        rest.push(await restRead());
        mcp.push(await mcpCall());
      }
    }
    const m = stats(mcp);
    const r = stats(rest);
    const f = (x: Stats) =>
      `p50 ${x.p50.toFixed(2)} ms  p99 ${x.p99.toFixed(2)} ms  mean ${x.mean.toFixed(2)} ms`;
    console.log(`${engine}: ${ROUNDS} sequential requests each, alternating, after ${WARM_UP} warm-up each`);
    console.log(`  mcp tools/call svc_get_contact  ${f(m)}`);
    console.log(`  rest GET contacts?id=eq.…       ${f(r)}`);
    console.log(
      `  tools/list: ${tools.length} tools, ${listBytes.length} bytes (${gzipped} bytes gzipped, informative)`,
    );
    return [
      `mcp ${engine}: MCP/REST p50 ${(m.p50 / r.p50).toFixed(2)}×, p99 ${(m.p99 / r.p99).toFixed(2)}× (goal ≤ 1.5×); tools/list ${listBytes.length} bytes, ${gzipped} gzipped`,
    ];
  } finally {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const out = await bench('pglite', {});
const onPostgres = await withScratchDatabase('mcp', (url) =>
  bench('postgres', { DATABASE_URL: url, DATABASE_POOL_SIZE: '16' }),
);
out.push(...(onPostgres ?? []));
console.log();
for (const line of out) console.log(line);

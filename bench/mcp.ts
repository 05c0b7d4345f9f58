// What a tool call costs: `tools/call svc_get_contact` on the MCP server (POST
// /functions/v1/mcp-server) against `GET /rest/v1/contacts?id=eq.…` for the same row, with the
// same agent token, in the same run. Both go over real HTTP with plain fetch (keep-alive), one
// request at a time, alternating between the two. Prints p50/p99/mean of each, the ratio MCP/REST
// (goal ≤ 1.5) and the size of the tools/list answer. Never fails on a figure.
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import type { RunningService } from '../src/main.ts';
import { type BenchTenant, onBothEngines } from './bench-service.ts';

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

async function bench(engine: string, svc: RunningService, tenant: BenchTenant) {
  const s = svc.services;
  const anon = { apikey: s.keys.anonKey };
  // An agent token: a key with the write scope, exchanged at agent-auth.
  const key = await postJson(
    `${svc.url}/functions/v1/agent-api-key-create`,
    { name: 'bench agent', scopes: ['write'] },
    { ...anon, authorization: `Bearer ${tenant.accessToken}` },
  );
  if (key.status !== 201) throw new Error(`key creation: ${key.status} ${JSON.stringify(key.json)}`);
  const auth = await postJson(`${svc.url}/functions/v1/agent-auth`, { api_key: key.json.api_key }, anon);
  if (auth.status !== 200) throw new Error(`agent-auth: ${auth.status} ${JSON.stringify(auth.json)}`);
  const token = auth.json.access_token as string;
  const { contactId } = tenant;

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
}

await onBothEngines('mcp', bench);

// What the REST layer costs: GET /rest/v1/contacts?select=*&limit=25 and one row by id, at 32
// concurrent connections, against a baseline route in the same process that runs the same SQL
// with the same claims through db.asPrincipal and no REST layer. Prints both and the ratio
// (goal: REST keeps ≥ 70 % of the baseline's throughput on PostgreSQL). Never fails on a figure.
import { performance } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { RunningService } from '../src/main.ts';
import { principalFromClaims } from '../src/platform/http/authenticate.ts';
import { parseRead } from '../src/rest/parse.ts';
import { pageOf } from '../src/rest/range.ts';
import { readSql } from '../src/rest/sql.ts';
import { type BenchTenant, onBothEngines } from './bench-service.ts';

const CONCURRENCY = 32;
const REQUESTS = 3000;

async function load(url: string, headers: Record<string, string>) {
  const latencies: number[] = [];
  let sent = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < REQUESTS) {
        sent++;
        const t = performance.now();
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        if (res.status >= 300) throw new Error(`${url}: ${res.status}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const rps = REQUESTS / ((performance.now() - start) / 1000);
  return {
    rps,
    p50: latencies[Math.floor(latencies.length / 2)] ?? 0,
    p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
  };
}

async function bench(engine: string, svc: RunningService, tenant: BenchTenant) {
  const s = svc.services;
  // The baseline: the same SQL, the same claims, one transaction, no REST layer in between.
  const principal = principalFromClaims(tenant.claims);
  const baseline = new Hono().get('/:q', async (c) => {
    const params = new URLSearchParams(c.req.query());
    const q = parseRead(params);
    const rel = s.schema.get('contacts');
    if (!rel) throw new Error('no contacts');
    const sql = readSql(s.schema, rel, q, pageOf(q, undefined), false);
    const [row] = await s.db.asPrincipal(
      principal,
      (tx) => tx.query<{ body: string }>(sql.text, sql.values),
      { readOnly: true },
    );
    return c.body(row?.body ?? '[]', 200, { 'content-type': 'application/json' });
  });
  const base = serve({ fetch: baseline.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => base.once('listening', r));
  const basePort = (base.address() as { port: number }).port;
  const headers = { apikey: s.keys.anonKey, authorization: `Bearer ${tenant.accessToken}` };
  const lines: string[] = [];
  try {
    for (const [label, query] of [
      ['list of 25', 'select=*&limit=25'],
      ['one by id', `select=*&id=eq.${tenant.contactId}`],
    ] as const) {
      await load(`${svc.url}/rest/v1/contacts?${query}`, headers); // warm-up
      const rest = await load(`${svc.url}/rest/v1/contacts?${query}`, headers);
      const plain = await load(`http://127.0.0.1:${basePort}/x?${query}`, headers);
      const f = (r: typeof rest) =>
        `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms`;
      console.log(`${engine} ${label}:\n  rest     ${f(rest)}\n  baseline ${f(plain)}`);
      lines.push(
        `rest ${engine} ${label}: ${((rest.rps / plain.rps) * 100).toFixed(0)} % of baseline throughput (goal ≥ 70 % on PostgreSQL)`,
      );
    }
  } finally {
    base.close();
  }
  return lines;
}

await onBothEngines('rest', bench);

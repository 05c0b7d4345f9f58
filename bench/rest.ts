// What the REST layer costs: GET /rest/v1/contacts?select=*&limit=25 and one row by id, at 32
// concurrent connections, against a baseline route in the same process that runs the same SQL
// with the same claims through db.asPrincipal and no REST layer. Prints both and the ratio
// (goal: REST keeps ≥ 70 % of the baseline's throughput on PostgreSQL). Never fails on a figure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/main.ts';
import { SERVICE } from '../src/platform/db/database.ts';
import { principalFromClaims } from '../src/platform/http/authenticate.ts';
import { parseRead } from '../src/rest/parse.ts';
import { pageOf } from '../src/rest/range.ts';
import { readSql } from '../src/rest/sql.ts';
import { withScratchDatabase } from './scratch-database.ts';

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

async function bench(engine: string, env: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-rest-'));
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
  const signup = await fetch(`${svc.url}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: s.keys.anonKey, 'content-type': 'application/json' },
    body: JSON.stringify({
      email: `bench-${Date.now()}@example.test`,
      password: 'password-8',
      data: { organization_name: 'Bench' },
    }),
  });
  const session = (await signup.json()) as { access_token: string };
  const claims = await s.tokens.verify(session.access_token);
  const org = (claims.app_metadata as { organization_id: string }).organization_id;
  await s.db.query("update organizations set plan = 'scale' where id = $1", [org]);
  await s.db.query("update plans set api_calls_per_day = null where slug = 'scale'");
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

  // The baseline: the same SQL, the same claims, one transaction, no REST layer in between.
  const principal = principalFromClaims(claims);
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
  const headers = { apikey: s.keys.anonKey, authorization: `Bearer ${session.access_token}` };
  const lines: string[] = [];
  try {
    for (const [label, query] of [
      ['list of 25', 'select=*&limit=25'],
      ['one by id', `select=*&id=eq.${one?.id}`],
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
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return lines;
}

const out = await bench('pglite', {});
const onPostgres = await withScratchDatabase('rest', (url) =>
  bench('postgres', { DATABASE_URL: url, DATABASE_POOL_SIZE: '16' }),
);
out.push(...(onPostgres ?? []));
console.log();
for (const line of out) console.log(line);

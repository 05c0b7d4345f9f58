// Big tenants (issue 28): BENCH_ROWS contacts (default 100,000) and as many orders with two lines
// each in one organization beside a small second one, on a scratch PostgreSQL database, served by
// the real service in a process of its own (scale-service.ts). This process is the load generator:
// each row of the issue's table is a pair of requests sent one at a time, interleaved (which goes
// first alternates), and printed as the ratio of their medians, measured in the same minutes:
// an MCP tool call against the /rest/v1 read of the same rows, with the same agent token, or a
// /rest/v1 shape against its cheaper counterpart. Then EXPLAIN ANALYZE of the statements the
// slow ones send. A benchmark, not a test: it prints figures and never fails because of one.
//   BENCH_ROWS=1000000 npm run bench:scale     (the million: not for CI)
// Then the insert rate at this size against an almost empty tenant (bench/scale-inserts.ts, on
// PostgreSQL, a service and scratch database of its own).
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { listContacts } from '../src/domain/contacts.ts';
import { listOrders } from '../src/domain/orders.ts';
import { search } from '../src/domain/search.ts';
import type { Database, Principal, Queryable } from '../src/platform/db/database.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { type Child, median, startChild } from './child.ts';
import { insertTable, measureScaleInserts } from './scale-inserts.ts';
import type { BigTenant } from './scale-seed.ts';
import { TENANT_ROWS } from './scale-seed.ts';
import { withScratchDatabase } from './scratch-database.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 31);
const WARMUP = 5;

type Info = { url: string; anonKey: string; tenant: BigTenant; seconds: number };
type Call = { label: string; send: () => Promise<unknown> };

async function json(res: Response) {
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

/** An agent token for the tenant, as bench/mcp.ts gets one. */
async function agentToken(info: Info) {
  const anon = { apikey: info.anonKey, 'content-type': 'application/json' };
  const key = await json(
    await fetch(`${info.url}/functions/v1/agent-api-key-create`, {
      method: 'POST',
      headers: { ...anon, authorization: `Bearer ${info.tenant.accessToken}` },
      body: JSON.stringify({ name: 'scale bench', scopes: ['read'] }),
    }),
  );
  const auth = await json(
    await fetch(`${info.url}/functions/v1/agent-auth`, {
      method: 'POST',
      headers: anon,
      body: JSON.stringify({ api_key: key.api_key }),
    }),
  );
  return auth.access_token as string;
}

function clients(info: Info, token: string) {
  let id = 0;
  const mcp = (name: string, args: Record<string, unknown>): Call => ({
    label: `MCP \`${name} ${JSON.stringify(args)}\``,
    send: async () => {
      const body = await json(
        await fetch(`${info.url}/functions/v1/mcp-server`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${token}`,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: ++id,
            method: 'tools/call',
            params: { name, arguments: args },
          }),
        }),
      );
      if (body.result?.isError) throw new Error(`${name}: ${JSON.stringify(body.result).slice(0, 300)}`);
      return body.result.structuredContent;
    },
  });
  const rest = (query: string, headers: Record<string, string> = {}): Call => ({
    label: `REST \`${decodeURIComponent(query)}\`${headers.prefer ? ` (${headers.prefer})` : ''}`,
    send: async () =>
      json(
        await fetch(`${info.url}/rest/v1/${query}`, {
          headers: { apikey: info.anonKey, authorization: `Bearer ${token}`, ...headers },
        }),
      ),
  });
  return { mcp, rest };
}

async function time(call: Call) {
  const t = performance.now();
  await call.send();
  return performance.now() - t;
}

/** Both calls' medians over interleaved rounds, and their ratio. */
async function pair(a: Call, b: Call) {
  for (let i = 0; i < WARMUP; i++) {
    await time(a);
    await time(b);
  }
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) {
      ta.push(await time(a));
      tb.push(await time(b));
    } else {
      tb.push(await time(b));
      ta.push(await time(a));
    }
  }
  const [ma, mb] = [median(ta), median(tb)];
  const line = `| ${a.label} | ${ma.toFixed(1)} ms | ${b.label} | ${mb.toFixed(1)} ms | **${(ma / mb).toFixed(2)}×** |`;
  console.log(line);
  return line;
}

/** The database, remembering the last statement sent under a principal. */
function recording(db: Database) {
  const last = { sql: '', params: [] as unknown[] };
  const wrapped: Database = Object.create(db);
  wrapped.asPrincipal = (principal, fn, opts) =>
    db.asPrincipal(
      principal,
      (tx) => {
        const spy: Queryable = Object.create(tx);
        spy.query = (sql: string, params?: unknown[]) => {
          last.sql = sql;
          last.params = params ?? [];
          return tx.query(sql, params);
        };
        return fn(spy);
      },
      opts,
    );
  // Single-statement reads (svc_get_contact, svc_search, most lists) go through queryAs.
  wrapped.queryAs = (principal, sql, params, opts) => {
    last.sql = sql;
    last.params = params ?? [];
    return db.queryAs(principal, sql, params, opts);
  };
  return { db: wrapped, last };
}

/** EXPLAIN ANALYZE of the last statement `run` sent, as the tenant's owner (RLS). */
async function explain(
  label: string,
  db: Database,
  principal: Principal,
  run: (db: Database) => Promise<unknown>,
) {
  const { db: spied, last } = recording(db);
  await run(spied);
  const plan = await db.asPrincipal(
    principal,
    (tx) => tx.query<{ 'QUERY PLAN': string }>(`explain (analyze, costs off) ${last.sql}`, last.params),
    { readOnly: true },
  );
  console.log(`\n${label}\n${plan.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}`);
}

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;

await withScratchDatabase('scale', async (url) => {
  let child: Child<Info> | undefined;
  const db = openPostgres(url, 2);
  try {
    // BENCH_CPU_PROF=<dir>: the service's CPU profile, written there when it stops (seed included).
    const prof = process.env.BENCH_CPU_PROF;
    child = await startChild<Info>(
      'scale-service.ts',
      { DATABASE_URL: url },
      prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : [],
    );
    const info = child.info;
    console.log(
      `seeded ${TENANT_ROWS} contacts and ${TENANT_ROWS} orders (two lines each) beside a tenant of 1,000 in ${info.seconds.toFixed(0)} s`,
    );
    const token = await agentToken(info);
    const { mcp, rest } = clients(info, token);
    const { org } = info.tenant;
    const [contact] = await db.query<{ id: string }>(
      "select id from public.contacts where organization_id = $1 and email like 'c4242-%'",
      [org],
    );
    const [at] = await db.query<{ created_at: string; id: string }>(
      `select to_json(created_at) #>> '{}' as created_at, id from public.contacts
        where organization_id = $1 order by created_at desc, id desc offset 90000 limit 1`,
      [org],
    );
    const contactId = contact?.id as string;
    const page = 'order=created_at.desc,id.desc';
    // Seeded a second apart: the keyset cursor after row 90,000 is its created_at alone.
    const after = at ? `&created_at=lt.${encodeURIComponent(at.created_at)}` : '';
    console.log(
      `\nload average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; ${ROUNDS} interleaved rounds each, medians\n`,
    );
    console.log('| request | median | against | median | ratio |\n|---|---|---|---|---|');
    const lines = [
      await pair(
        mcp('svc_search', { query: 'ann', limit: 10 }),
        rest(`contacts?first_name=ilike.*ann*&${page}&limit=10`),
      ),
      await pair(
        mcp('svc_search', { query: '4242', limit: 10 }),
        rest(`contacts?last_name=ilike.*4242*&${page}&limit=10`),
      ),
      await pair(
        mcp('svc_list_contacts', { name: '4242' }),
        rest(`contacts?last_name=ilike.*4242*&${page}&limit=25`),
      ),
      await pair(
        mcp('svc_list_contacts', { name: 'ann' }),
        rest(`contacts?first_name=ilike.*ann*&${page}&limit=25`),
      ),
      await pair(mcp('svc_list_orders', {}), rest(`orders?${page}&limit=25`)),
      await pair(mcp('svc_get_contact', { contact_id: contactId }), rest(`contacts?id=eq.${contactId}`)),
      await pair(
        rest(`contacts?${page}&limit=25`, { prefer: 'count=exact' }),
        rest(`contacts?${page}&limit=25`),
      ),
      await pair(rest(`contacts?${page}&limit=25&offset=90000`), rest(`contacts?${page}&limit=25${after}`)),
    ];
    console.log(
      `\nload average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );

    const principal: Principal = { kind: 'user', userId: '', claims: claimsOf(info.tenant.accessToken) };
    principal.userId = principal.claims.sub as string;
    console.log('\nEXPLAIN ANALYZE (as the owner, RLS) of what the slow ones send:');
    await explain('svc_search "ann"', db, principal, (d) =>
      search({ db: d }, principal, { query: 'ann', limit: 10 }),
    );
    await explain('svc_list_contacts name "4242"', db, principal, (d) =>
      listContacts({ db: d }, principal, { name: '4242', limit: 25 }),
    );
    await explain('svc_list_orders {}', db, principal, (d) =>
      listOrders({ db: d }, principal, { limit: 25 }),
    );
    console.log(`\n${lines.join('\n')}`);
  } finally {
    await child?.stop();
    await db.close();
  }
});

console.log('\nsingle-row /rest/v1 inserts, large tenant against small (bench/scale-inserts.ts):');
for (const line of insertTable(await measureScaleInserts(['postgres']))) console.log(line);

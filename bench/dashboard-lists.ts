// The dashboard's big lists (issue 28) at BENCH_ROWS rows (default 100,000) a table: what its
// pages send now (a keyset cursor, the total asked once per filter set with count=estimated)
// against what they sent before (offset=… with count=exact on every page), in the same run, on
// the tenant of bench/scale.ts (scale-service.ts: the real service in a process of its own), plus
// as many inventory items and agent sign-in attempts. This process is the load generator: each
// pair is sent one request at a time, interleaved (which goes first alternates), medians. Then
// EXPLAIN ANALYZE, as the owner under RLS, of the statement each keyset page sends, to show the
// cursor is an index condition (the scan starts at it) and not a filter over the rows it skips.
// Sorted by a header (issue 30 §3): the same pages in another order (contacts by first name, 20
// names of 5,000 rows each, and by email; orders by number), keyset on (column, id) against the
// offset page in that order; and the export of every contact in one request
// (/functions/v1/export/contacts) against reading them through /rest/v1 at 100 rows a request.
//   node --import tsx bench/dashboard-lists.ts   (BENCH_DATABASE_URL: the PostgreSQL server, as bench/scale.ts)
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Principal } from '../src/platform/db/database.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { parseRead } from '../src/rest/parse.ts';
import { readPlan, relationOf } from '../src/rest/plan.ts';
import { pageOf } from '../src/rest/range.ts';
import { loadSchemaCache } from '../src/rest/schema-cache.ts';
import { readSql } from '../src/rest/sql.ts';
import { type Child, median, startChild } from './child.ts';
import type { BigTenant } from './scale-seed.ts';
import { TENANT_ROWS } from './scale-seed.ts';
import { withScratchDatabase } from './scratch-database.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const WARMUP = 3;
const PAGE = 25;
const DEEP = Math.floor(TENANT_ROWS * 0.9);

const EXPORT_ROUNDS = Number(process.env.BENCH_EXPORT_ROUNDS ?? 5);

type Cursor = { created_at: string; id: string };

/** The orders a header gives (web/src/pages/…, SORTS), each on an index (organization_id, column, id). */
const SORTED = [
  { table: 'contacts', column: 'first_name', descending: false, label: 'contacts by name, A→Z' },
  { table: 'contacts', column: 'email', descending: false, label: 'contacts by email, A→Z' },
  { table: 'orders', column: 'order_number', descending: true, label: 'orders by number, last first' },
] as const;

/** What web/src/lib/keyset.ts sends after a row of a sorted page (values only: the seed has no nulls there). */
const sortedKeyset = (column: string, descending: boolean, c: { v: string; id: string }) => {
  const [range, strict] = descending ? ['lte', 'lt'] : ['gte', 'gt'];
  const v = c.v.replaceAll('\\', '\\\\').replaceAll('"', '\\"');
  return `${column}=${range}.${encodeURIComponent(c.v)}&or=${encodeURIComponent(`(${column}.${strict}."${v}",id.${strict}.${c.id})`)}`;
};
type Info = { url: string; anonKey: string; tenant: BigTenant; seconds: number };

/** What each list page selects and how its rows are keyed (web/src/pages/…). */
const LISTS: { table: string; select: string; filter?: string }[] = [
  { table: 'contacts', select: 'id,first_name,last_name,email,phone,company,tags,notes,source,created_at' },
  {
    table: 'orders',
    select:
      'id,order_number,status,currency,total,customer_name,created_at,contacts(id,first_name,last_name,email)',
  },
  {
    table: 'inventory_items',
    // The page opens on the active items.
    filter: 'status=eq.active&',
    select:
      'id,name,sku,description,unit_price,currency,quantity_on_hand,quantity_reserved,reorder_point,status,auto_created,created_at,updated_at',
  },
  { table: 'agent_auth_attempts', select: 'id,key_prefix,ip,outcome,reason,created_at' },
];

/** Inventory items and sign-in attempts beside the seeded contacts and orders, ten to an instant (ties). */
async function seedMore(url: string, org: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('set session_replication_role = replica');
    await client.query(
      `insert into public.inventory_items (organization_id, name, sku, unit_price, quantity_on_hand, status, created_at)
       select $1, 'Item ' || g, 'SKU-' || g, 10, 5, case when g % 20 = 0 then 'archived' else 'active' end,
              now() - ((g / 10) || ' seconds')::interval
         from generate_series(1, $2::int) g`,
      [org, TENANT_ROWS],
    );
    await client.query(
      `insert into public.agent_auth_attempts (organization_id, key_prefix, ip, outcome, reason, created_at)
       select $1, 'sk_live_ab', '10.0.0.' || (g % 200), 'failure', 'unknown key', now() - ((g / 10) || ' seconds')::interval
         from generate_series(1, $2::int) g`,
      [org, TENANT_ROWS],
    );
    await client.query('set session_replication_role = origin');
    await client.query('vacuum analyze');
  } finally {
    await client.end();
  }
}

async function time(send: () => Promise<unknown>) {
  const t = performance.now();
  await send();
  return performance.now() - t;
}

/** Both sides' medians over interleaved rounds, and their ratio. */
async function pair(
  label: string,
  before: () => Promise<unknown>,
  after: () => Promise<unknown>,
  rounds = ROUNDS,
) {
  for (let i = 0; i < Math.min(WARMUP, rounds); i++) {
    await time(before);
    await time(after);
  }
  const tb: number[] = [];
  const ta: number[] = [];
  for (let i = 0; i < rounds; i++) {
    if (i % 2 === 0) {
      tb.push(await time(before));
      ta.push(await time(after));
    } else {
      ta.push(await time(after));
      tb.push(await time(before));
    }
  }
  const [mb, ma] = [median(tb), median(ta)];
  const line = `| ${label} | ${mb.toFixed(1)} ms | ${ma.toFixed(1)} ms | **${(ma / mb).toFixed(2)}×** |`;
  console.log(line);
  return line;
}

const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;

const keyset = (c: Cursor) =>
  `created_at=lte.${encodeURIComponent(c.created_at)}&or=${encodeURIComponent(`(created_at.lt."${c.created_at}",id.lt.${c.id})`)}`;

await withScratchDatabase('lists', async (url) => {
  let child: Child<Info> | undefined;
  const db = openPostgres(url, 2);
  try {
    child = await startChild<Info>('scale-service.ts', { DATABASE_URL: url });
    const info = child.info;
    const { org, accessToken } = info.tenant;
    await seedMore(url, org);
    console.log(`seeded ${TENANT_ROWS} rows a table in ${info.seconds.toFixed(0)} s (+ items and attempts)`);

    const rest =
      (query: string, prefer?: string, method = 'GET') =>
      async () => {
        const res = await fetch(`${info.url}/rest/v1/${query}`, {
          method,
          headers: {
            apikey: info.anonKey,
            authorization: `Bearer ${accessToken}`,
            ...(prefer ? { prefer } : {}),
          },
        });
        const text = await res.text();
        if (res.status >= 300) throw new Error(`${res.status} ${text.slice(0, 300)}`);
        return text;
      };
    const order = 'order=created_at.desc,id.desc';
    const cursors = new Map<string, Cursor>();
    for (const { table, filter } of LISTS) {
      // The last row of the page before: the cursor a person paging there would hold.
      for (const at of [PAGE, DEEP]) {
        const [row] = await db.query<Cursor>(
          `select to_json(created_at) #>> '{}' as created_at, id::text from public.${table}
            where organization_id = $1 ${filter ? "and status = 'active'" : ''}
            order by created_at desc, id desc offset $2 limit 1`,
          [org, at - 1],
        );
        if (row) cursors.set(`${table} ${at}`, row);
      }
    }
    const load = () =>
      loadavg()
        .map((l) => l.toFixed(1))
        .join(' ');
    console.log(`\nload average ${load()}; ${ROUNDS} interleaved rounds each, medians\n`);
    console.log('| page | before (offset, count=exact) | after (keyset) | after/before |\n|---|---|---|---|');
    const pairs: [label: string, before: () => Promise<unknown>, after: () => Promise<unknown>][] = [];
    for (const { table, select, filter = '' } of LISTS) {
      const base = `${table}?${filter}select=${select}&${order}`;
      // The first page still brings the total (count=estimated), once per filter set; no later page counts.
      pairs.push([
        `${table}: first page`,
        rest(`${base}&offset=0&limit=${PAGE}`, 'count=exact'),
        rest(`${base}&limit=${PAGE + 1}`, 'count=estimated'),
      ]);
      for (const [label, at] of [
        ['second page', PAGE],
        [`page at row ${DEEP.toLocaleString('en')}`, DEEP],
      ] as const) {
        pairs.push([
          `${table}: ${label}`,
          rest(`${base}&offset=${at}&limit=${PAGE}`, 'count=exact'),
          rest(`${base}&${keyset(cursors.get(`${table} ${at}`) as Cursor)}&limit=${PAGE + 1}`),
        ]);
      }
    }
    // Every shape once before any is timed: the first pair is not the one that warms the service.
    for (const [, before, after] of pairs) await Promise.all([before(), after()]);
    const lines: string[] = [];
    for (const [label, before, after] of pairs) lines.push(await pair(label, before, after));
    console.log(`\nload average ${load()}`);

    // Sorted by a header: keyset on (column, id) against the offset page in the same order.
    console.log(
      `\nSorted (issue 30 §3), load average ${load()}\n\n| page | offset | keyset (column, id) | keyset/offset |\n|---|---|---|---|`,
    );
    const sortedCursors = new Map<string, { v: string; id: string }>();
    for (const { table, column, descending } of SORTED) {
      for (const at of [PAGE, DEEP]) {
        const dir = descending ? 'desc' : 'asc';
        const [row] = await db.query<{ v: string; id: string }>(
          `select to_json(${column}) #>> '{}' as v, id::text from public.${table}
            where organization_id = $1 order by ${column} ${dir}, id ${dir} offset $2 limit 1`,
          [org, at - 1],
        );
        if (row) sortedCursors.set(`${table} ${column} ${at}`, row);
      }
    }
    const sortedPairs: typeof pairs = [];
    for (const { table, column, descending, label } of SORTED) {
      const { select } = LISTS.find((l) => l.table === table) as (typeof LISTS)[number];
      const dir = descending ? 'desc' : 'asc';
      const base = `${table}?select=${select}&order=${column}.${dir},id.${dir}`;
      for (const [where, at] of [
        ['second page', PAGE],
        [`page at row ${DEEP.toLocaleString('en')}`, DEEP],
      ] as const) {
        const c = sortedCursors.get(`${table} ${column} ${at}`) as { v: string; id: string };
        sortedPairs.push([
          `${label}: ${where}`,
          rest(`${base}&offset=${at}&limit=${PAGE}`),
          rest(`${base}&${sortedKeyset(column, descending, c)}&limit=${PAGE + 1}`),
        ]);
      }
    }
    for (const [, before, after] of sortedPairs) await Promise.all([before(), after()]);
    const sortedLines: string[] = [];
    for (const [label, before, after] of sortedPairs) sortedLines.push(await pair(label, before, after));
    console.log(`\nload average ${load()}`);

    // Every contact, A→Z by first name: one export request against 1,000 REST requests of 100.
    const exportAll = async () => {
      const res = await fetch(
        `${info.url}/functions/v1/export/contacts?select=first_name,last_name,email,phone,company,tags,created_at&order=first_name.asc`,
        {
          headers: { apikey: info.anonKey, authorization: `Bearer ${accessToken}` },
        },
      );
      const bytes = (await res.arrayBuffer()).byteLength;
      if (res.status !== 200) throw new Error(`export ${res.status}`);
      return bytes;
    };
    const pageThrough = async () => {
      let cursor: { v: string; id: string } | null = null;
      let requests = 0;
      for (;;) {
        const q = `contacts?select=id,first_name,last_name,email,phone,company,tags,created_at&order=first_name.asc,id.asc${cursor ? `&${sortedKeyset('first_name', false, cursor)}` : ''}&limit=100`;
        const rows = JSON.parse((await rest(q)()) as string) as { id: string; first_name: string }[];
        requests++;
        const last = rows.at(-1);
        if (!last || rows.length < 100) return requests;
        cursor = { v: last.first_name, id: last.id };
      }
    };
    console.log(`\nExport of ${TENANT_ROWS.toLocaleString('en')} contacts, load average ${load()}`);
    console.log(
      `one export request: ${((await exportAll()) / 1e6).toFixed(1)} MB; /rest/v1 at 100 a page: ${await pageThrough()} requests`,
    );
    const exportLine = await pair(
      `every contact by first name: ${TENANT_ROWS.toLocaleString('en')} rows`,
      pageThrough,
      exportAll,
      EXPORT_ROUNDS,
    );
    console.log(`\nload average ${load()}`);

    const schema = await loadSchemaCache(db);
    const principal: Principal = { kind: 'user', userId: '', claims: claimsOf(accessToken) };
    principal.userId = principal.claims.sub as string;
    /** EXPLAIN ANALYZE of the read a /rest/v1 query string makes, as the owner under RLS. */
    const explain = async (table: string, title: string, search: string) => {
      const q = parseRead(new URLSearchParams(search));
      const plan = readPlan(schema, relationOf(schema, table), q, pageOf(q, undefined), null, org);
      const sql = readSql(plan);
      const rows = await db.asPrincipal(
        principal,
        (tx) =>
          tx.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers, costs off) ${sql.text}`, sql.values),
        { readOnly: true },
      );
      console.log(`\n${title}\n${rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}`);
    };
    console.log('\nEXPLAIN ANALYZE (as the owner, RLS) of the keyset page each list sends:');
    for (const { table, select, filter = '' } of LISTS) {
      const c = cursors.get(`${table} ${DEEP}`) as Cursor;
      await explain(table, table, `${filter}select=${select}&${order}&${keyset(c)}&limit=${PAGE + 1}`);
    }
    for (const { table, column, descending } of SORTED) {
      const { select } = LISTS.find((l) => l.table === table) as (typeof LISTS)[number];
      const dir = descending ? 'desc' : 'asc';
      const c = sortedCursors.get(`${table} ${column} ${DEEP}`) as { v: string; id: string };
      await explain(
        table,
        `${table} by ${column} ${dir}`,
        `select=${select}&order=${column}.${dir},id.${dir}&${sortedKeyset(column, descending, c)}&limit=${PAGE + 1}`,
      );
    }
    console.log(`\n${lines.join('\n')}\n\n${sortedLines.join('\n')}\n\n${exportLine}`);
  } finally {
    await child?.stop();
    await db.close();
  }
});

// Big tenants (issue 11, section 5): 100,000 contacts in one organization and 100,000 more in ten
// others, on a scratch PostgreSQL database, served by the real service (`startService`).
// 1. The domain's contact list (what svc_list_contacts runs): median of the RLS transaction and
//    EXPLAIN ANALYZE of the very statement it sent.
// 2. The request shapes of the issue over HTTP, each beside the single-row read of the same run.
// 3. The `ilike` filters with the trigram indexes of 0012 and again after dropping them.
// A benchmark, not a test: it prints figures and never exits non-zero because of one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PostgrestClient } from '@supabase/postgrest-js';
import { loadConfig } from '../src/config.ts';
import { type ContactFilter, listContacts } from '../src/domain/contacts.ts';
import { search } from '../src/domain/search.ts';
import { startService } from '../src/main.ts';
import { type Database, type Principal, type Queryable, SERVICE } from '../src/platform/db/database.ts';
import { type Figure, measureShapes, type Shape, shapes, table, textShapes } from './scale-http.ts';
import { OTHER_TENANTS, rowAt, seedBigTenant, TENANT_ROWS } from './scale-seed.ts';
import { withScratchDatabase } from './scratch-database.ts';

const RUNS = 15;
const TRIGRAM_COLUMNS = ['first_name', 'last_name', 'email', 'company'];
const TRIGRAM_INDEXES = TRIGRAM_COLUMNS.map((c) => `contacts_${c}_trgm_idx`);

/** The database, remembering the last statement sent under a principal (the list's own SQL). */
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
  return { db: wrapped, last };
}

async function explain(db: Database, principal: Principal, sql: string, params: unknown[]) {
  const plan = await db.asPrincipal(
    principal,
    (tx) => tx.query<{ 'QUERY PLAN': string }>(`explain (analyze, costs off) ${sql}`, params),
    { readOnly: true },
  );
  return plan.map((r) => r['QUERY PLAN']);
}

/** Median of `RUNS` calls, and the plan of the statement the last call sent. */
async function domainCall(
  label: string,
  db: Database,
  run: (db: Database) => Promise<unknown>,
  principal: Principal,
  showPlan = true,
) {
  const { db: spied, last } = recording(db);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await run(spied);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  await run(spied);
  const lines = await explain(db, principal, last.sql, last.params);
  const exec = lines.find((l) => l.startsWith('Execution Time')) ?? '';
  console.log(`\n${label}: median ${times[Math.floor(RUNS / 2)]?.toFixed(1)} ms (RLS transaction); ${exec}`);
  if (showPlan) for (const l of lines) if (!/^(Planning|Execution)/.test(l)) console.log(`    ${l}`);
  return { median: times[Math.floor(RUNS / 2)] ?? Number.NaN, exec };
}

/** EXPLAIN ANALYZE of a page filtered by each `ilike`, as the tenant (RLS) and as the service role. */
async function explainText(db: Database, principal: Principal, org: string) {
  const preds = [
    "first_name ilike '%123%'",
    "email ilike '%c123%'",
    "(first_name ilike '%4242%' or last_name ilike '%4242%')",
    "first_name ilike '%nobody%'",
  ];
  const out: string[] = [];
  for (const pred of preds) {
    const page = (extra: string) =>
      `select * from public.contacts where ${pred}${extra} order by created_at desc, id desc limit 25`;
    const time = (lines: string[]) =>
      lines.find((l) => l.startsWith('Execution Time'))?.replace('Execution Time: ', '');
    const asTenant = await explain(db, principal, page(''), []);
    const asService = await explain(db, SERVICE, page(' and organization_id = $1'), [org]);
    const usesIndex = (lines: string[]) =>
      lines.some((l) => l.includes('_trgm_idx')) ? 'trigram index' : 'tenant scan';
    out.push(
      `| \`${pred}\` | ${time(asTenant)} (${usesIndex(asTenant)}) | ${time(asService)} (${usesIndex(asService)}) |`,
    );
  }
  return out;
}

await withScratchDatabase('scale', async (url) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-bench-scale-'));
  const svc = await startService(
    loadConfig({
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATA_DIR: dir,
      DATABASE_URL: url,
      RATE_LIMIT_STANDARD_PER_MINUTE: '1000000',
    }),
  );
  try {
    const db = svc.services.db;
    let t = performance.now();
    const { org, accessToken, principal } = await seedBigTenant(svc);
    console.log(
      `seeded ${TENANT_ROWS} contacts in one tenant and ${TENANT_ROWS} in ${OTHER_TENANTS} others in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    t = performance.now();

    const first = await listContacts({ db }, principal, { limit: 25 });
    const lists: [string, ContactFilter][] = [
      ['first page of 25', { limit: 25 }],
      ['second page of 25 (keyset)', { limit: 25, cursor: first.next_cursor ?? undefined }],
      ['tag filter (1 row in 50), page of 25', { limit: 25, tag: 'vip' }],
      ['name filter (1 row in 9), page of 25', { limit: 25, name: 'Last 9' }],
      ['name filter matching nothing', { limit: 25, name: 'nobody' }],
    ];
    for (const [label, filter] of lists) {
      await domainCall(label, db, (d) => listContacts({ db: d }, principal, filter), principal);
    }
    const searchNobody = (d: Database) =>
      search({ db: d }, principal, { query: 'nobody', types: ['contact'], limit: 10 });
    await domainCall('svc_search over contacts, matching nothing', db, searchNobody, principal, false);

    const nameNobody = (d: Database) => listContacts({ db: d }, principal, { limit: 25, name: 'nobody' });
    const client = (key: string, token: string) =>
      new PostgrestClient(`${svc.url}/rest/v1`, {
        headers: { apikey: key, Authorization: `Bearer ${token}` },
      });
    const tenant = client(svc.services.keys.anonKey, accessToken);
    const service = client(svc.services.keys.serviceRoleKey, svc.services.keys.serviceRoleKey);
    const one = await rowAt(svc, org, 0);
    const single: Shape = {
      label: 'single-row read',
      request: (r) => r.from('contacts').select('*').eq('id', one.id),
    };

    const http = await measureShapes(tenant, shapes(await rowAt(svc, org, 89_999)), single);
    table('HTTP, as the tenant owner (RLS), with the trigram indexes of 0012:', http);
    const withIdx = {
      explain: await explainText(db, principal, org),
      service: await measureShapes(service, textShapes(org), single, tenant),
      name: await domainCall('name filter matching nothing (again)', db, nameNobody, principal, false),
    };

    await db.query(`drop index ${TRIGRAM_INDEXES.map((i) => `public.${i}`).join(', ')}`);
    const withoutIdx = {
      explain: await explainText(db, principal, org),
      tenant: await measureShapes(tenant, textShapes(), single),
      service: await measureShapes(service, textShapes(org), single, tenant),
      name: await domainCall(
        'name filter matching nothing, no trigram indexes',
        db,
        nameNobody,
        principal,
        false,
      ),
    };
    const tenantWith = http.filter((f) => textShapes().some((s) => s.label === f.label));
    table('HTTP without the trigram indexes (dropped):', [...withoutIdx.tenant, ...withoutIdx.service]);
    table('HTTP, service role, with the trigram indexes:', withIdx.service);
    console.log('\nEXPLAIN ANALYZE, page of 25 (execution time), with the trigram indexes → without');
    console.log('\n| filter | tenant (RLS), with | service role, with |\n|---|---|---|');
    for (const l of withIdx.explain) console.log(l);
    console.log('\n| filter | tenant (RLS), without | service role, without |\n|---|---|---|');
    for (const l of withoutIdx.explain) console.log(l);
    console.log(
      `\ndomain name filter matching nothing: ${withIdx.name.median.toFixed(1)} ms with, ${withoutIdx.name.median.toFixed(1)} ms without`,
    );
    // The tenant's plan is the same either way, so any difference is the machine drifting:
    // measured once more with the indexes back, the three figures show how far it drifts.
    for (const c of TRIGRAM_COLUMNS) {
      await db.query(
        `create index contacts_${c}_trgm_idx on public.contacts using gin (${c} extensions.gin_trgm_ops)`,
      );
    }
    await db.query('vacuum analyze public.contacts');
    const again = await measureShapes(tenant, textShapes(), single);
    summary('tenant ilike, with → without → with again (median ms)', tenantWith, withoutIdx.tenant, again);
    summary('service-role ilike, with → without (median ms)', withIdx.service, withoutIdx.service);
    console.log(`\nmeasured in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  } finally {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

function summary(title: string, ...runs: Figure[][]) {
  console.log(`\n${title}`);
  for (const [i, b] of (runs[0] ?? []).entries()) {
    console.log(`  ${b.label}: ${runs.map((r) => r[i]?.median.toFixed(1)).join(' → ')}`);
  }
}

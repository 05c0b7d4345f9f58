// Big tenants: the domain's contact list (what svc_list_contacts runs) with 100,000 contacts in
// one organization and 100,000 more spread over ten others, on PostgreSQL. Prints, per list shape,
// the median time of the whole RLS transaction and EXPLAIN ANALYZE of the very statement the
// domain sent, so a sort over the whole tenant or JSON built for every row shows in the plan.
// A benchmark, not a test: it prints figures and never exits non-zero because of one.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { type ContactFilter, listContacts } from '../src/domain/contacts.ts';
import type { Database, Principal, Queryable } from '../src/platform/db/database.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { withScratchDatabase } from './scratch-database.ts';

const TENANT_ROWS = 100_000;
const OTHER_TENANTS = 10;
const RUNS = 15;

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

async function seed(db: Database): Promise<Principal> {
  const tag = randomBytes(4).toString('hex');
  const [user] = await db.query<{ id: string }>(
    `insert into auth.users (email, encrypted_password) values ($1, 'not-a-hash') returning id`,
    [`scale-${tag}@example.test`],
  );
  const orgs = await db.query<{ id: string }>(
    `insert into public.organizations (name, plan) select 'Scale ' || g, 'scale' from generate_series(0, $1::int) g
     returning id`,
    [OTHER_TENANTS],
  );
  const [org, ...others] = orgs.map((o) => o.id);
  if (!user || !org) throw new Error('seed failed');
  await db.query(
    `insert into public.organization_members (organization_id, user_id, role) values ($1, $2, 'owner')`,
    [org, user.id],
  );
  // One statement per tenant, so its rows share created_at (now()): every page boundary is a tie
  // broken by id, the case the order and the cursor must agree on.
  const contacts = `insert into public.contacts (organization_id, first_name, last_name, email, tags)
    select $1, 'First ' || g, 'Last ' || g, 'c' || g || '-' || $3 || '@example.test',
           case when g % 50 = 0 then array['vip'] else '{}' end
      from generate_series(1, $2::int) g`;
  // The largest plan allows 50,000 contacts: a scratch database lifts the ceiling for the seed.
  await db.query('alter table public.contacts disable trigger contacts_plan_ceiling');
  await db.query(contacts, [org, TENANT_ROWS, 'a']);
  for (const other of others) await db.query(contacts, [other, TENANT_ROWS / OTHER_TENANTS, other]);
  await db.query('alter table public.contacts enable trigger contacts_plan_ceiling');
  await db.query('analyze');
  return {
    kind: 'user',
    userId: user.id,
    claims: {
      sub: user.id,
      role: 'authenticated',
      app_metadata: { organization_id: org, org_id: org, org_role: 'owner' },
    },
  };
}

async function measure(
  label: string,
  db: Database,
  run: () => Promise<unknown>,
  last: { sql: string; params: unknown[] },
  principal: Principal,
) {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const plan = await db.asPrincipal(
    principal,
    (tx) => tx.query<{ 'QUERY PLAN': string }>(`explain (analyze, costs off) ${last.sql}`, last.params),
    { readOnly: true },
  );
  const lines = plan.map((r) => r['QUERY PLAN']);
  const exec = lines.find((l) => l.startsWith('Execution Time')) ?? '';
  console.log(
    `\n${label}: median ${times[Math.floor(RUNS / 2)]?.toFixed(1)} ms per list (RLS transaction); ${exec}`,
  );
  for (const l of lines) if (!l.startsWith('Planning') && !l.startsWith('Execution')) console.log(`    ${l}`);
}

await withScratchDatabase('scale', async (url) => {
  const base = openPostgres(url, 2);
  try {
    await migrate(base);
    const t = performance.now();
    const principal = await seed(base);
    console.log(
      `seeded ${TENANT_ROWS} contacts in one tenant and ${TENANT_ROWS} in ${OTHER_TENANTS} others in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const { db, last } = recording(base);
    const first = await listContacts({ db }, principal, { limit: 25 });
    const shapes: [string, ContactFilter][] = [
      ['first page of 25', { limit: 25 }],
      ['second page of 25 (keyset)', { limit: 25, cursor: first.next_cursor ?? undefined }],
      ['tag filter (1 row in 50), page of 25', { limit: 25, tag: 'vip' }],
      ['name filter (1 row in 9), page of 25', { limit: 25, name: 'Last 9' }],
      ['name filter matching nothing', { limit: 25, name: 'nobody' }],
    ];
    for (const [label, filter] of shapes) {
      await measure(label, base, () => listContacts({ db }, principal, filter), last, principal);
    }
  } finally {
    await base.close();
  }
});

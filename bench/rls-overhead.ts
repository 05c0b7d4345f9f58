// What row-level security costs on the hottest read there is: one contact by primary key, as the
// owner (baseline) and as a signed-in user through db.asPrincipal. Both engines run in the same
// process and the same run, so the ratio compares like with like. A benchmark, not a test: it
// prints figures and never exits non-zero because of one.
//
// Where the time goes (see docs/performance.md): the baseline is one statement; a request under
// RLS is four (begin, claims + app.establish_context, the read, commit), sent in one write with
// the read prepared per connection; a read-only transaction answers without waiting for its
// commit. The "owner db.transaction" line shows what the transaction shape alone costs.
//
// "What each statement costs" takes the request apart (issue 28: the claims step at most the cost
// of the read it guards): an empty transaction, the claims statement alone, the read alone as the
// owner, and the claims with the read, each in a transaction of the same shape (begin, statements,
// commit), so that the differences are the statements' own cost; on PostgreSQL also the CPU its
// backends spent per call (bench/cpu.ts), which the machine's other work disturbs least.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Database, Principal } from '../src/platform/db/database.ts';
import { migrate } from '../src/platform/db/migrate.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { openPglite } from '../src/platform/db/pglite.ts';
import { cpuMeter } from './cpu.ts';

const CONTACTS = 1000;
const WARMUP = 200;
const ITERATIONS = 2000;
const ROUNDS = 4; // variants take turns in slices, so drift on a shared machine hits them alike
const CONCURRENCY = 8;
const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const READ = 'select * from public.contacts where organization_id = $1 and id = $2';

type Seed = { orgId: string; ids: string[]; foreign: [string, string]; principal: Principal };
/** Reads one contact by key and returns how many rows came back. */
type Op = (orgId: string, id: string) => Promise<number>;
type Variant = { label: string; op: Op; rls: boolean };
type Result = { label: string; opsPerSec: number; p50: number; p99: number };

function one<T>(rows: T[]): T {
  if (rows[0] === undefined) throw new Error('statement returned no row');
  return rows[0];
}

/** A user who owns one organization with CONTACTS contacts, and a contact of another tenant. */
async function seed(db: Database): Promise<Seed> {
  const tag = randomBytes(4).toString('hex');
  const insertUser = `insert into auth.users (email, encrypted_password) values ($1, 'not-a-hash') returning id`;
  const userId = one(await db.query<{ id: string }>(insertUser, [`bench-${tag}@example.test`])).id;
  const insertOrg = 'insert into public.organizations (name) values ($1) returning id';
  const orgId = one(await db.query<{ id: string }>(insertOrg, [`Bench ${tag}`])).id;
  const otherOrg = one(await db.query<{ id: string }>(insertOrg, [`Other ${tag}`])).id;
  // New organizations start on free, whose ceiling (50 contacts) refuses the seed; scale holds it.
  await db.query("update public.organizations set plan = 'scale' where id = $1", [orgId]);
  const member = `insert into public.organization_members (organization_id, user_id, role) values ($1, $2, 'owner')`;
  await db.query(member, [orgId, userId]);
  const insertContacts = `insert into public.contacts (organization_id, first_name, email)
    select $1, 'First ' || g, 'c' || g || '@example.test' from generate_series(1, $2::int) g returning id`;
  const ids = (await db.query<{ id: string }>(insertContacts, [orgId, CONTACTS])).map((r) => r.id);
  const otherId = one(await db.query<{ id: string }>(insertContacts, [otherOrg, 1])).id;
  await db.query('analyze public.contacts');
  // The shape /auth/v1 issues: the current organization both as organization_id and org_id.
  const claims = {
    sub: userId,
    role: 'authenticated',
    app_metadata: { organization_id: orgId, org_id: orgId, org_role: 'owner' },
  };
  return { orgId, ids, foreign: [otherOrg, otherId], principal: { kind: 'user', userId, claims } };
}

/** Runs `count` reads from `callers` concurrent loops: per-read latencies (µs) and wall time. */
async function drive(s: Seed, op: Op, count: number, callers: number) {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  const caller = async () => {
    while (next < count) {
      const id = s.ids[next++ % CONTACTS] ?? '';
      const t = performance.now();
      const rows = await op(s.orgId, id);
      latencies.push((performance.now() - t) * 1000);
      // A read that silently returned nothing (claims wrong, policy denying) would look fast.
      if (rows !== 1) throw new Error(`expected one contact, got ${rows}`);
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  return { latencies, seconds: (performance.now() - start) / 1000 };
}

async function compare(s: Seed, variants: Variant[], callers = 1): Promise<Result[]> {
  for (const v of variants) {
    // A variant that claims RLS but ran as the owner would see the other tenant's contact.
    if (v.rls && (await v.op(...s.foreign)) !== 0) throw new Error(`${v.label}: sees another tenant`);
    // Warm up at the measured concurrency, so the pool has opened its connections before timing.
    await drive(s, v.op, WARMUP, callers);
  }
  const acc = variants.map(() => ({ latencies: [] as number[], seconds: 0 }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [k, v] of variants.entries()) {
      const r = await drive(s, v.op, ITERATIONS / ROUNDS, callers);
      acc[k]?.latencies.push(...r.latencies);
      if (acc[k]) acc[k].seconds += r.seconds;
    }
  }
  return variants.map(({ label }, k) => {
    const { latencies, seconds } = acc[k] ?? { latencies: [0], seconds: 1 };
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.floor(p * latencies.length)] ?? 0;
    return { label, opsPerSec: ITERATIONS / seconds, p50: pct(0.5), p99: pct(0.99) };
  });
}

const COST_ITERATIONS = 4000;

/**
 * The claims statement alone against the read alone (and the two together), per call: µs of the
 * caller's wall time and, on PostgreSQL, of the backends' CPU. Interleaved rounds, medians.
 */
async function statementCosts(db: Database, s: Seed, database?: string): Promise<string> {
  let k = 0;
  const id = () => s.ids[k++ % CONTACTS] ?? '';
  const steps: [string, () => Promise<unknown>][] = [
    ['an empty transaction (begin, commit)', () => db.transaction(async () => 0)],
    ['the claims statement alone', () => db.asPrincipal(s.principal, async () => 0)],
    ['the read alone, as the owner', () => db.transaction((tx) => tx.query(READ, [s.orgId, id()]))],
    [
      'the claims statement and the read',
      () => db.asPrincipal(s.principal, (tx) => tx.query(READ, [s.orgId, id()])),
    ],
  ];
  const wall = steps.map(() => [] as number[]);
  const cpu = steps.map(() => [] as number[]);
  for (const [, step] of steps) for (let i = 0; i < WARMUP; i++) await step();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [j, [, step]] of steps.entries()) {
      const n = COST_ITERATIONS / ROUNDS;
      const meter = cpuMeter(process.pid, database);
      const t = performance.now();
      for (let i = 0; i < n; i++) await step();
      wall[j]?.push(((performance.now() - t) * 1000) / n);
      cpu[j]?.push(meter(n).postgres);
    }
  }
  const med = (xs: number[] | undefined) =>
    [...(xs ?? [])].sort((a, b) => a - b)[Math.floor((xs?.length ?? 0) / 2)] ?? 0;
  const [w, c] = [wall.map(med), cpu.map(med)];
  console.log(
    `  what each statement costs, µs per call (${COST_ITERATIONS} calls each, ${ROUNDS} interleaved rounds, medians)`,
  );
  for (const [j, [label]] of steps.entries()) {
    const dbCpu = database ? `   database CPU ${fmt(c[j] ?? 0, 5)}` : '';
    console.log(`    ${label.padEnd(54)} wall ${fmt(w[j] ?? 0, 5)}${dbCpu}`);
  }
  const [empty = 0, claims = 0, read = 0, both = 0] = database ? c : w;
  const what = database ? 'of database CPU' : 'of wall time';
  // The statements' own cost is what a call costs beyond the empty transaction; the ratio is of
  // whole calls, as a caller (or a bare server) sees the two: goal ≥ 0.8.
  const line =
    `claims statement ${fmt(claims - empty)} µs ${what} against ${fmt(read - empty)} for the read as the owner ` +
    `and ${fmt(both - claims)} for the read under RLS after it (goal: claims ≤ the read); ` +
    `claims + read at ${(read / both).toFixed(2)}× the owner's read, whole calls (goal ≥ 0.8)`;
  console.log(`    ${line}`);
  return line;
}

const overhead = (base: Result, r: Result) => (base.opsPerSec / r.opsPerSec - 1) * 100;
const fmt = (x: number, width = 0) => x.toFixed(0).padStart(width);

function print(title: string, results: Result[]): void {
  console.log(`  ${title}`);
  const base = results[0];
  for (const r of results) {
    const extra = base && r !== base ? `  overhead ${overhead(base, r).toFixed(1).padStart(6)}%` : '';
    const lat = `p50 ${fmt(r.p50, 5)} µs  p99 ${fmt(r.p99, 6)} µs`;
    console.log(`    ${r.label.padEnd(54)} ${fmt(r.opsPerSec, 6)} ops/s  ${lat}${extra}`);
  }
}

function summary(engine: string, [base, rls]: Result[], tail = ''): string {
  if (!base || !rls) return `rls-overhead ${engine}: no result`;
  const figures = `owner select ${fmt(base.opsPerSec)} ops/s, rls ${fmt(rls.opsPerSec)} ops/s`;
  const ratio = (rls.opsPerSec / base.opsPerSec).toFixed(2);
  return `rls-overhead ${engine}: ${figures}: the RLS transaction at ${ratio}× the plain select (goal ≥ 0.75)${tail}`;
}

/** The two measured variants, identical on both engines. */
function variants(db: Database, s: Seed): [Variant, Variant] {
  const asUser: Op = async (org, id) =>
    (await db.asPrincipal(s.principal, (tx) => tx.query(READ, [org, id]), { readOnly: true })).length;
  return [
    {
      label: 'baseline: db.query as owner',
      op: async (org, id) => (await db.query(READ, [org, id])).length,
      rls: false,
    },
    { label: 'rls: db.asPrincipal(user, readOnly)', op: asUser, rls: true },
  ];
}

/** The same read through db.queryAs: claims and read before one Sync, no begin or commit. */
const oneSyncVariant = (db: Database, s: Seed): Variant => ({
  label: 'rls: db.queryAs(user, readOnly), one Sync',
  op: async (org, id) => (await db.queryAs(s.principal, READ, [org, id], { readOnly: true })).length,
  rls: true,
});

const oneSyncTail = ([base, , one]: Result[]) =>
  base && one
    ? `; through db.queryAs (what /rest/v1 reads use): ${(one.opsPerSec / base.opsPerSec).toFixed(2)}×`
    : '';

async function benchPglite(): Promise<string> {
  const db = await openPglite(undefined);
  try {
    await migrate(db);
    const s = await seed(db);
    console.log(
      `pglite (in memory), ${CONTACTS} contacts, ${ITERATIONS} reads per variant after ${WARMUP} warm-up`,
    );
    const results = await compare(s, [...variants(db, s), oneSyncVariant(db, s)]);
    print('sequential', results);
    const costs = await statementCosts(db, s);
    return `${summary('pglite', results, oneSyncTail(results))}\n  pglite ${costs}`;
  } finally {
    await db.close();
  }
}

async function benchPostgres(): Promise<string | null> {
  const admin = new pg.Client({ connectionString: SERVER, connectionTimeoutMillis: 3000 });
  const shown = new URL(SERVER);
  if (shown.password) shown.password = '***';
  const name = `svc_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
  } catch (err) {
    console.log(`postgres: skipped, cannot use ${shown} (${(err as Error).message})`);
    await admin.end().catch(() => {});
    return null;
  }
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  const db = openPostgres(url.toString(), CONCURRENCY);
  try {
    await migrate(db);
    const s = await seed(db);
    const version = one(await db.query<{ v: string }>(`select current_setting('server_version') v`)).v;
    console.log(`postgres ${version} at ${shown.host}, scratch database ${name}, ${CONTACTS} contacts`);
    // The owner in the same transaction shape tells the transaction's cost apart from the policies'.
    const ownerTx: Variant = {
      label: 'for comparison: owner db.transaction, no RLS',
      op: async (org, id) => (await db.transaction((tx) => tx.query(READ, [org, id]))).length,
      rls: false,
    };
    const oneSync = oneSyncVariant(db, s);
    const seq = await compare(s, [...variants(db, s), oneSync, ownerTx]);
    print(`sequential, ${ITERATIONS} reads per variant after ${WARMUP} warm-up`, seq);
    const conc = await compare(s, [...variants(db, s), oneSync], CONCURRENCY);
    print(`${CONCURRENCY} concurrent callers, pool of ${CONCURRENCY}`, conc);
    const [cBase, cRls] = conc;
    const tail =
      cBase && cRls ? `; ${CONCURRENCY} concurrent: ${(cRls.opsPerSec / cBase.opsPerSec).toFixed(2)}×` : '';
    const costs = await statementCosts(db, s, name);
    return `${summary('postgres', seq, `${tail}${oneSyncTail(seq)}`)}\n  postgres ${costs}`;
  } finally {
    await db.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

const started = performance.now();
const lines = [await benchPglite()];
console.log();
const onPostgres = await benchPostgres();
if (onPostgres) lines.push(onPostgres);
console.log();
for (const line of lines) console.log(line);
console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);

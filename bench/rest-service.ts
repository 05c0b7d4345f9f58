// The service as bench/rest.ts measures it, in a process of its own: the real composition root
// (startService) on DATABASE_URL or on PGlite in BENCH_DATA_DIR, logging at info to stdout like a
// deployment. With BENCH_SEED=1 it first seeds the data (bench/rest-seed.ts), then sends each
// measured request once to itself and records the statements the database adapter was given
// (claims and SQL, per request), so the bare baseline can send exactly the same ones. It tells
// its parent its URL over IPC and serves until SIGTERM.
import { writeFileSync } from 'node:fs';
import { loadConfig } from '../src/config.ts';
import { startService } from '../src/main.ts';
import { claimsStatement, type Database, type Queryable } from '../src/platform/db/database.ts';
import { openDatabase } from '../src/platform/db/open.ts';
import { signUpOwner } from './bench-service.ts';
import { seedTenant } from './rest-seed.ts';

export type Statement = { text: string; values: unknown[] };
export type BenchRequest = {
  label: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /**
   * The ids the request is drawn from (BENCH_IDS of them): the path names the first, and each
   * request of a run names one of them in its place, in the same position of the statement's values.
   */
  ids: string[];
  /** What one request sends inside its transaction: claims first, then the callback's SQL. */
  statements: Statement[];
  readOnly: boolean;
  /** Sent by db.queryAs: claims and one statement before a single Sync, no begin/commit. */
  oneSync: boolean;
  status: number;
};
export type Fixture = {
  anonKey: string;
  accessToken: string;
  requests: BenchRequest[];
  /** DATABASE_READ_CONNECTIONS of the service, which the baseline shares reads across too. */
  readConnections: number;
};

const env = process.env;
const config = loadConfig({
  PORT: '0',
  LOG_LEVEL: 'info',
  DATA_DIR: env.BENCH_DATA_DIR ?? '',
  RATE_LIMIT_STANDARD_PER_MINUTE: '100000000',
  ...(env.DATABASE_URL ? { DATABASE_URL: env.DATABASE_URL, DATABASE_POOL_SIZE: '16' } : {}),
  ...(env.DATABASE_READ_CONNECTIONS ? { DATABASE_READ_CONNECTIONS: env.DATABASE_READ_CONNECTIONS } : {}),
});

/** The database, recording what each asPrincipal or queryAs call sends while `recording` is set. */
const db = await openDatabase(config);
let recording: { statements: Statement[]; readOnly: boolean; oneSync: boolean } | null = null;
const recorder: Database = Object.create(db);
recorder.queryAs = (principal, sql, params, opts) => {
  const rec = recording;
  if (rec) {
    rec.readOnly = opts?.readOnly ?? false;
    rec.oneSync = true;
    rec.statements.push(claimsStatement(principal, opts?.readOnly));
    rec.statements.push({ text: sql, values: params ?? [] });
  }
  return db.queryAs(principal, sql, params, opts);
};
recorder.asPrincipal = (principal, fn, opts) => {
  const rec = recording;
  if (!rec) return db.asPrincipal(principal, fn, opts);
  rec.readOnly = opts?.readOnly ?? false;
  rec.statements.push(claimsStatement(principal, opts?.readOnly));
  return db.asPrincipal(
    principal,
    (tx) => {
      const spy: Queryable = {
        query: (text, values) => {
          rec.statements.push({ text, values: values ?? [] });
          return tx.query(text, values);
        },
      };
      return fn(spy);
    },
    opts,
  );
};

const svc = await startService(config, { database: recorder });

async function seed(): Promise<Fixture> {
  const { anonKey } = svc.services.keys;
  const { accessToken, org } = await signUpOwner(svc, 'Bench');
  const seeded = await seedTenant(db, org);
  svc.services.plans.forget(org);
  // BENCH_IDS=1 asks for one row again and again, as this bench did before issue 28.
  const spread = (ids: string[]) => ids.slice(0, Math.max(1, Number(env.BENCH_IDS ?? ids.length)));
  const [contactIds, orderIds] = [spread(seeded.contactIds), spread(seeded.orderIds)];
  const requests: Omit<BenchRequest, 'statements' | 'readOnly' | 'oneSync' | 'status'>[] = [
    {
      label: 'one contact by id',
      method: 'GET',
      path: `/rest/v1/contacts?id=eq.${contactIds[0]}`,
      ids: contactIds,
    },
    // A keyset page after a random contact, as the dashboard pages.
    {
      label: 'list of 25',
      method: 'GET',
      path: `/rest/v1/contacts?select=*&order=id&limit=25&id=gt.${contactIds[0]}`,
      ids: contactIds,
    },
    {
      label: 'order with its items',
      method: 'GET',
      path: `/rest/v1/orders?select=*,order_items(*)&id=eq.${orderIds[0]}`,
      ids: orderIds,
    },
    {
      label: 'insert one contact',
      method: 'POST',
      path: '/rest/v1/contacts',
      body: JSON.stringify({ first_name: 'Bench', company: 'Acme' }),
      ids: [],
    },
  ];
  const recorded: BenchRequest[] = [];
  for (const r of requests) {
    recording = { statements: [], readOnly: false, oneSync: false };
    const send = () =>
      fetch(`${svc.url}${r.path}`, {
        method: r.method,
        headers: {
          apikey: anonKey,
          authorization: `Bearer ${accessToken}`,
          'content-type': 'application/json',
        },
        body: r.body,
      });
    // The seed outlasts the server's keep-alive timeout: a reused socket may be closed under us.
    const res = await send().catch(send);
    await res.arrayBuffer();
    if (res.status >= 300) throw new Error(`${r.method} ${r.path}: ${res.status}`);
    const sent = recording.statements.at(-1)?.values ?? [];
    if (r.ids.length && sent.filter((v) => v === r.ids[0]).length !== 1)
      throw new Error(`${r.path}: the id is not one bound value of its statement`);
    recorded.push({ ...r, ...recording, status: res.status });
    recording = null;
  }
  return { anonKey, accessToken, requests: recorded, readConnections: config.databaseReadConnections };
}

if (env.BENCH_SEED === '1' && env.BENCH_FIXTURE) {
  writeFileSync(env.BENCH_FIXTURE, JSON.stringify(await seed()));
}
process.send?.({ url: svc.url });
process.once('SIGTERM', async () => {
  await svc.close();
  process.exit(0);
});

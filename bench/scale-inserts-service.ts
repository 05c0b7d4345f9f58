// The service as bench/scale-inserts.ts measures it, in a process of its own: the real
// composition root on DATABASE_URL (or PGlite in BENCH_DATA_DIR), with two owners signed up over
// HTTP, one organization holding BENCH_SMALL contacts and one BENCH_LARGE, both on the scale plan
// with its contacts ceiling raised above the large one (so every insert is still checked against
// a ceiling, as a paying tenant's is). BENCH_SOURCE=<checkout> runs that checkout's code and
// migrations instead of this one's (the "before" figure: main). Tells its parent its URL and the
// two access tokens over IPC and serves until SIGTERM.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Config from '../src/config.ts';
import type * as Main from '../src/main.ts';
import { SERVICE } from '../src/platform/db/database.ts';
import { signUpOwner } from './bench-service.ts';

const env = process.env;
const root = env.BENCH_SOURCE
  ? pathToFileURL(`${path.resolve(env.BENCH_SOURCE)}/`)
  : new URL('../', import.meta.url);
const { loadConfig } = (await import(new URL('src/config.ts', root).href)) as typeof Config;
const { startService } = (await import(new URL('src/main.ts', root).href)) as typeof Main;

const SMALL = Number(env.BENCH_SMALL ?? 100);
const LARGE = Number(env.BENCH_LARGE ?? 100_000);

const svc = await startService(
  loadConfig({
    PORT: '0',
    LOG_LEVEL: 'info',
    DATA_DIR: env.BENCH_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'svc-bench-inserts-')),
    RATE_LIMIT_STANDARD_PER_MINUTE: '100000000',
    ...(env.DATABASE_URL ? { DATABASE_URL: env.DATABASE_URL, DATABASE_POOL_SIZE: '16' } : {}),
  }),
);
const { db } = svc.services;
await db.query("update plans set api_calls_per_day = null, contacts = $1 where slug = 'scale'", [LARGE * 10]);
const tenants: Record<string, string> = {};
for (const [name, rows] of [
  ['small', SMALL],
  ['large', LARGE],
] as const) {
  const { accessToken, org } = await signUpOwner(svc, `Inserts ${name}`);
  await db.query("update organizations set plan = 'scale' where id = $1", [org]);
  // One statement, through the ceiling trigger like any write (it runs once per statement).
  await db.asPrincipal(SERVICE, (tx) =>
    tx.query(
      `insert into contacts (organization_id, first_name, last_name, email)
       select $1, 'First ' || g, 'Last ' || g, 'c' || g || '@example.test' from generate_series(1, $2::int) g`,
      [org, rows],
    ),
  );
  tenants[name] = accessToken;
}
// What autovacuum would have done by the time anyone writes (GIN pending lists, statistics).
await db.query('vacuum analyze public.contacts');
process.send?.({ url: svc.url, anonKey: svc.services.keys.anonKey, tenants });
process.on('SIGTERM', () => {
  void svc.close().then(() => process.exit(0));
});
